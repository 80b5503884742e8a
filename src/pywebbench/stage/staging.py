"""Staging onto a host: what each role runs there, copied or built once and kept by content hash.

A host placed by `--hosts` shares none of this machine's files, so before its role starts it
gets, under its stage directory (`~/.cache/pywebbench/stage` there):

- files/<hash>/NAME: a static binary as it is (Toxiproxy, the Go upstream);
- apps/<hash>/: the catalog's apps, sent as a tar stream over the SSH connection;
- roles/<hash>/: for the db, upstream and proxy roles, pywebbench's own source and the roles'
  two dependencies (psutil, psycopg) installed here by uv for the host's Python, with a `python`
  that runs the host's python3 on them (so a role host needs neither uv nor a package index);
- envs/<hash>/: a stack's environment at the same hash as here, built there by uv from this
  environment's frozen pins (and the patched wheels here, if any).

Each lands in a temporary directory renamed into place, so a copy cut off half-way is never
taken for a finished one. The netns rig's namespaces see this machine's files, but staging runs
there all the same: the rig stands in for separate machines, so its runs take the same path.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import platform
import shlex
import shutil
import subprocess
import tarfile
from collections.abc import Callable, Iterator, Sequence
from importlib import metadata
from pathlib import Path

from pywebbench.stage.envs import cache_root, uv_binary
from pywebbench.stage.ssh import SshConnection, SshError

ROLE_REQUIREMENTS = ("psutil", "psycopg[binary]")
"""What the role modules (services/remote_db.py, remote_upstream.py, remote_proxy.py) import
beyond the standard library; tests/unit/test_staging.py keeps this list honest."""
PACKAGE_DIR = Path(__file__).resolve().parent.parent
ENV_MARKER = "pywebbench-env.json"
_SKIP = ("__pycache__",)
_UV_PLACES = ("$HOME/.local/bin/uv", "$HOME/.cargo/bin/uv")


class StagingError(RuntimeError):
    """Something a role needs could not be put on its host."""


def tree_hash(root: Path) -> str:
    """Every file's relative path, mode's exec bit and bytes: what a staged tree is named by."""
    digest = hashlib.sha256()
    for path in _tree_files(root):
        digest.update(str(path.relative_to(root)).encode() + b"\0")
        digest.update(b"x" if os.access(path, os.X_OK) else b"-")
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()[:16]


def _tree_files(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if path.is_file() and not any(part in _SKIP for part in path.relative_to(root).parts) \
                and path.suffix != ".pyc":
            yield path


def file_hash(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:16]


def pinned(requirements: Sequence[str]) -> tuple[str, ...]:
    """Each requirement at the version installed here (`psycopg[binary]` -> `psycopg[binary]==3.2.3`)."""
    out = []
    for req in requirements:
        name = req.split("[", 1)[0]
        try:
            out.append(f"{req}=={metadata.version(name)}")
        except metadata.PackageNotFoundError:
            out.append(req)
    return tuple(out)


def roles_tree(python_version: str) -> Path:
    """Here, in the cache: pywebbench's source, the roles' dependencies installed by uv for
    `python_version` on this machine's architecture, and a `python` that runs the host's python3
    with both on its path. Staged as one tree, so a role host needs neither uv nor an index."""
    reqs = pinned(ROLE_REQUIREMENTS)
    source = tree_hash(PACKAGE_DIR)
    key = hashlib.sha256(json.dumps([python_version, platform.machine(), source, *reqs]).encode()).hexdigest()[:16]
    tree = cache_root() / "roles" / key
    if (tree / "python").exists():
        return tree
    tmp = tree.with_name(f"{key}.tmp-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    done = subprocess.run([uv_binary(), "pip", "install", "--quiet", "--target", str(tmp), "--python-version",
                           python_version, "--python-platform", f"{platform.machine()}-unknown-linux-gnu", *reqs],
                          capture_output=True, text=True, timeout=600, check=False,
                          env={**os.environ, "UV_PYTHON_DOWNLOADS": "never"})
    if done.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise StagingError(f"the roles' dependencies for Python {python_version} could not be installed here: "
                           f"{lines[-1] if lines else done.returncode}")
    for path in _tree_files(PACKAGE_DIR):
        copy = tmp / "pywebbench" / path.relative_to(PACKAGE_DIR)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, copy)
    wrapper = tmp / "python"
    wrapper.write_text('#!/bin/sh\nPYTHONPATH="$(dirname "$0")" exec python3 "$@"\n')
    wrapper.chmod(0o755)
    try:
        tmp.rename(tree)
    except OSError:  # another run made it first
        shutil.rmtree(tmp, ignore_errors=True)
    return tree


class HostStage:
    """One host's stage directory, reached over its connection; what is there already is reused."""

    def __init__(self, conn: SshConnection, uv: str | None = None, root: str | None = None,
                 offline: bool = False) -> None:
        self.conn = conn
        self._uv = uv
        self.offline = offline
        """uv builds from its cache alone: the netns rig's namespaces have no route out, and share
        this machine's uv cache, which holds every package of the environments built here."""
        self._root = root
        self._done: dict[str, str] = {}
        self.staged: list[dict[str, object]] = []
        """What was put on the host (kind, name, where, reused or not): the placement record's part."""

    @property
    def root(self) -> str:
        """The stage directory on the host, made on first use."""
        if self._root is None:
            where = '"$HOME/.cache/pywebbench/stage"'
            self._root = self.conn.run_line(f"mkdir -p {where} && cd {where} && pwd", timeout=30).stdout.strip()
        return self._root

    # -- files and trees -------------------------------------------------------------------------

    def file(self, local: Path) -> str:
        """A binary on the host, same bytes and exec bit; its path there."""
        key = f"file:{local}"
        if key not in self._done:
            where = f"{self.root}/files/{file_hash(local)}"
            target = f"{where}/{local.name}"
            if not self._exists(target):
                self._receive(where, ["tar", "-xf", "-"], lambda: _tar([(local, local.name)]))
                self._note("file", local.name, target, False)
            else:
                self._note("file", local.name, target, True)
            self._done[key] = target
        return self._done[key]

    def tree(self, local: Path, kind: str = "tree", prefix: str = "") -> str:
        """A directory on the host (without bytecode caches), inside `prefix/` if given; its path there."""
        key = f"tree:{local}:{prefix}"
        if key not in self._done:
            where = f"{self.root}/{kind}/{tree_hash(local)}"
            reused = self._exists(where)
            if not reused:
                files = [(p, str(Path(prefix) / p.relative_to(local))) for p in _tree_files(local)]
                self._receive(where, ["tar", "-xf", "-"], lambda: _tar(files))
            self._note(kind, local.name, where, reused)
            self._done[key] = where
        return self._done[key]

    def _exists(self, path: str) -> bool:
        return self.conn.run(["test", "-e", path], check=False, timeout=15).returncode == 0

    def _receive(self, where: str, unpack: list[str], stream: Callable[[], bytes]) -> None:
        """`stream()` bytes piped into `unpack` in a fresh directory, renamed to `where` when whole."""
        tmp = f"{where}.tmp-{os.getpid()}"
        line = (f"rm -rf {shlex.quote(tmp)} && mkdir -p {shlex.quote(tmp)} && cd {shlex.quote(tmp)} && "
                f"{shlex.join(unpack)} && cd / && mkdir -p {shlex.quote(str(Path(where).parent))} && "
                f"(mv -T {shlex.quote(tmp)} {shlex.quote(where)} 2>/dev/null || rm -rf {shlex.quote(tmp)})")
        try:
            self.conn.send(line, stream())
        except SshError as exc:
            raise StagingError(f"copying to {self.conn.name} failed: {str(exc).rsplit(': ', 1)[-1].strip()}") from None

    # -- environments ---------------------------------------------------------------------------

    def uv(self) -> str:
        if self._uv is None:
            places = " ".join(_UV_PLACES)
            probe = (f'p=$(command -v uv 2>/dev/null); if [ -z "$p" ]; then for c in {places}; do '
                     f'[ -x "$c" ] && p="$c" && break; done; fi; echo "$p"')
            found = self.conn.run_line(probe, timeout=15).stdout.strip()
            if not found:
                raise StagingError(f"{self.conn.name} has no uv to build environments with "
                                   "(curl -LsSf https://astral.sh/uv/install.sh | sh)")
            self._uv = found
        return self._uv

    def role_python(self) -> str:
        """The python the db, upstream and proxy roles run under on this host: its own python3 with
        pywebbench's source and the roles' dependencies (built here for its Python) on its path."""
        key = "roles"
        if key not in self._done:
            version = self.conn.run(["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                    timeout=30).stdout.strip()
            where = self.tree(roles_tree(version), "roles")
            self._done[key] = f"{where}/python"
            self.staged[-1]["python"] = self._identity("python3")
        return self._done[key]

    def environment(self, local_env: Path, wheelhouse: Path | None = None) -> str:
        """A stack's environment on this host at the same hash, from the frozen pins here."""
        key = f"env:{local_env}"
        if key not in self._done:
            record = json.loads((local_env / ENV_MARKER).read_text())
            env = f"{self.root}/envs/{record['hash']}"
            reused = self._exists(f"{env}/{ENV_MARKER}")
            if not reused:
                python = ".".join(str(record["python"]).split()[1].split(".")[:2])  # "CPython 3.11.2 at ..." -> 3.11
                links = self.tree(wheelhouse, "wheelhouse") if wheelhouse is not None and any(wheelhouse.glob("*.whl")) \
                    else None
                self._build(env, python, tuple(record["freeze"]), links=links)
                self._receive_text(f"{env}/{ENV_MARKER}", json.dumps(record, indent=1))
            self._note("environment", str(record["hash"]), env, reused, python=self._identity(f"{env}/bin/python"))
            self._done[key] = env
        return self._done[key]

    def _build(self, env: str, python: str, requirements: Sequence[str], *, links: str | None = None) -> None:
        """A uv venv with `requirements`, built aside and renamed into place."""
        uv, tmp, q = shlex.quote(self.uv()), f"{env}.tmp", shlex.quote
        reqs = " ".join(q(r) for r in requirements)
        find = f" --find-links {q(links)}" if links else ""
        offline = " UV_OFFLINE=1" if self.offline else ""
        line = (f"export UV_PYTHON_DOWNLOADS=never{offline}; rm -rf {q(tmp)} && mkdir -p {q(str(Path(env).parent))} && "
                f"{uv} venv --quiet --python {q(python)} {q(tmp)} && "
                f"{uv} pip install --quiet --python {q(tmp)}/bin/python{find} {reqs}"
                f" && (mv -T {q(tmp)} {q(env)} 2>/dev/null || rm -rf {q(tmp)})")
        try:
            done = self.conn.run_line(line, timeout=900, check=False)
        except SshError as exc:
            raise StagingError(f"building {Path(env).name} on {self.conn.name} failed: {exc}") from None
        if done.returncode != 0:
            lines = [x.strip() for x in done.stderr.splitlines() if x.strip()]
            why = next((x for x in lines if x.startswith("error")), lines[-1] if lines else f"exit {done.returncode}")
            raise StagingError(f"building {Path(env).name} on {self.conn.name} failed: {why}")

    def _receive_text(self, path: str, text: str) -> None:
        try:
            self.conn.send(f"cat > {shlex.quote(path)}", text.encode(), timeout=60)
        except SshError as exc:
            raise StagingError(f"writing {path} on {self.conn.name} failed: {str(exc).rsplit(': ', 1)[-1]}") from None

    def _identity(self, python: str) -> str:
        """'CPython 3.11.2': the interpreter the host's uv chose (its patch version may differ from here)."""
        probe = "import platform; print(platform.python_implementation(), platform.python_version())"
        return self.conn.run([python, "-c", probe], check=False, timeout=30).stdout.strip()

    def _note(self, kind: str, name: str, where: str, reused: bool, **more: object) -> None:
        self.staged.append({"host": self.conn.name, "kind": kind, "name": name, "path": where, "reused": reused,
                            **more})


def _tar(files: Sequence[tuple[Path, str]]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path, name in files:
            archive.add(str(path), arcname=name, recursive=False)
    return buffer.getvalue()

