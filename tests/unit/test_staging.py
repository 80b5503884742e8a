"""Staging onto a host (stage/staging.py): content-hashed copies, reuse, and the roles' dependencies.

The SSH hop is replaced by a local shell (`LocalConn`), so what is tested is the staging itself:
the tar stream, the rename into place, the hash names and the reuse. Over real SSH on the netns
rig it is tests/integration/test_hosts_rig.py and the --hosts runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from pywebbench.stage.staging import PACKAGE_DIR, ROLE_REQUIREMENTS, HostStage, pinned, roles_tree, tree_hash
from pywebbench.stage.ssh import SshConnection, SshError


class LocalConn:
    """The calls HostStage makes on an SshConnection, run by a local shell."""

    name = "local"

    def run(self, argv: list[str], *, check: bool = True, timeout: float = 60.0) -> subprocess.CompletedProcess[str]:
        return self._done(subprocess.run(argv, capture_output=True, text=True, timeout=timeout), check)

    def run_line(self, line: str, *, timeout: float = 60.0, check: bool = True) -> subprocess.CompletedProcess[str]:
        return self._done(subprocess.run(["sh", "-c", line], capture_output=True, text=True, timeout=timeout), check)

    def send(self, line: str, data: bytes, *, timeout: float = 300.0) -> None:
        done = subprocess.run(["sh", "-c", line], input=data, capture_output=True, timeout=timeout)
        if done.returncode != 0:
            raise SshError(f"local: {line[:40]}: {done.stderr.decode()}")

    @staticmethod
    def _done(done: subprocess.CompletedProcess[str], check: bool) -> subprocess.CompletedProcess[str]:
        if check and done.returncode != 0:
            raise SshError(done.stderr)
        return done


def _stage(tmp_path: Path) -> HostStage:
    conn: SshConnection = LocalConn()  # type: ignore[assignment]
    return HostStage(conn, root=str(tmp_path / "stage"))


def test_a_file_lands_under_its_content_hash_with_its_exec_bit_and_is_reused(tmp_path: Path) -> None:
    binary = tmp_path / "toxiproxy-server"
    binary.write_bytes(b"#!/bin/sh\necho hi\n")
    binary.chmod(0o755)
    stage = _stage(tmp_path)
    where = Path(stage.file(binary))
    assert where.read_bytes() == binary.read_bytes() and where.stat().st_mode & 0o111
    assert where.parent.parent == tmp_path / "stage" / "files" and where.name == "toxiproxy-server"
    again = _stage(tmp_path)  # another run: found, not copied
    assert again.file(binary) == str(where) and again.staged[0]["reused"] is True
    assert stage.staged[0]["reused"] is False
    binary.write_bytes(b"#!/bin/sh\necho changed\n")  # other bytes, another name
    assert _stage(tmp_path).file(binary) != str(where)


def test_a_tree_is_copied_whole_without_bytecode_and_named_by_its_content(tmp_path: Path) -> None:
    src = tmp_path / "apps"
    (src / "templates").mkdir(parents=True)
    (src / "app.py").write_text("print('app')\n")
    (src / "templates" / "page.html").write_text("<p>{{ x }}</p>\n")
    (src / "__pycache__").mkdir()
    (src / "__pycache__" / "app.cpython-311.pyc").write_bytes(b"\0")
    first = tree_hash(src)
    (src / "__pycache__" / "other.pyc").write_bytes(b"\1")
    assert tree_hash(src) == first  # bytecode caches do not change the name
    where = Path(_stage(tmp_path).tree(src, "apps", prefix="pkg"))
    assert where.name == first and (where / "pkg" / "templates" / "page.html").read_text() == "<p>{{ x }}</p>\n"
    assert not (where / "pkg" / "__pycache__").exists()
    assert not list(where.parent.glob("*.tmp-*"))  # renamed into place, nothing half-done left
    (src / "app.py").write_text("print('changed')\n")
    assert tree_hash(src) != first


def test_a_failed_copy_is_one_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "stage"
    blocker.write_text("a file where the stage directory should be")
    binary = tmp_path / "tool"
    binary.write_bytes(b"x")
    try:
        _stage(tmp_path).file(binary)
    except Exception as exc:  # noqa: BLE001 - the message is what is checked
        assert "copying to local failed" in str(exc) and "\n" not in str(exc)
    else:
        raise AssertionError("staging into a file did not fail")


def test_the_roles_requirements_are_pinned_to_the_versions_here() -> None:
    pins = pinned(ROLE_REQUIREMENTS)
    assert pins[0].startswith("psutil==") and pins[1].startswith("psycopg[binary]==")
    assert pinned(("surely-not-installed-xyz",)) == ("surely-not-installed-xyz",)


def test_the_role_modules_import_nothing_beyond_the_staged_requirements() -> None:
    """If a role module starts importing numpy, the roles' environment on a host would lack it: this fails first."""
    probe = ("import sys, json, pywebbench.services.remote_db, pywebbench.services.remote_upstream, "
             "pywebbench.services.remote_proxy; "
             "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules if not m.startswith('_')} "
             "- set(sys.stdlib_module_names))))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True,
                          cwd=PACKAGE_DIR.parent)
    # sitecustomize: the site hook a distribution's Python loads at start (Debian's), not the roles' import
    third_party = set(json.loads(done.stdout)) - {"pywebbench", "cython_runtime", "sitecustomize"}
    allowed = {"psutil", "psycopg", "psycopg_binary", "typing_extensions"}  # psycopg's own dependency included
    assert third_party <= allowed, third_party - allowed


def test_the_roles_tree_runs_the_role_modules_on_a_bare_python3(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a role host gets: no venv, no uv, only its python3 and this tree."""
    monkeypatch.setenv("PYWEBBENCH_CACHE", str(tmp_path / "cache"))
    version = subprocess.run(["python3", "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    tree = roles_tree(version)
    assert roles_tree(version) == tree and not list(tree.parent.glob("*.tmp-*"))  # made once, then reused
    assert (tree / "pywebbench" / "services" / "remote_db.py").exists() and not (tree / "pywebbench" / "__pycache__").exists()
    probe = "import pywebbench.services.remote_db, pywebbench.services.remote_upstream, pywebbench.services.remote_proxy"
    done = subprocess.run([str(tree / "python"), "-c", probe], capture_output=True, text=True, cwd="/",
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr[-500:]
