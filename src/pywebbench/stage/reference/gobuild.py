"""Build the Go reference server and the slow upstream once per source + toolchain, then reuse.

The binaries land in `cache_dir/go-<key>/`, where the key hashes the Go sources (go.mod,
go.sum, every .go file) together with the Go version and target platform, so an edit or a
new toolchain builds afresh and anything else reuses the cached build. The sources are
copied to a scratch directory first: the package directory may be read-only (an installed
wheel) and `-mod=mod` may rewrite go.mod/go.sum.
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.stage.tools import locate

SOURCE_DIR = Path(__file__).resolve().parent / "go"
COMMANDS = ("reference", "upstream", "replay", "shapes")
BUILD_TIMEOUT_S = 900.0
PGX_MODULE = "github.com/jackc/pgx/v5"
# Module edits allowed, read-write module cache (a cache dir can be deleted with rm -r),
# no VCS stamping (git may be missing, and the copy is no repository).
GOFLAGS = "-mod=mod -modcacherw -buildvcs=false"


class GoBuildError(UserError):
    """Go is missing, or building the reference binaries failed."""


@dataclass(frozen=True)
class GoBinaries:
    reference: Path  # the Go reference app server: -host H -port P, configured by PWB_*
    upstream: Path  # the slow upstream API: -host H -port P -delay D -size N
    replay: Path  # a recorded log's arrivals at their own times (loadgen/replay.py), on vegeta's attacker
    shapes: Path  # the connection-shape drivers (idle, sse, wsecho) and the server that costs nothing (loadgen/shapes.py)
    go: str  # the go command that built them
    go_version: str  # e.g. "go1.26.8"
    platform: str  # GOOS/GOARCH
    pgx_version: str  # the pinned Postgres driver, from go.mod
    source_hash: str  # the cache key: sources + toolchain + platform
    cached: bool  # True when an earlier build was reused


def find_go(go: str | None = None) -> str:
    """The go command: `go` if given, else where the tool locator finds it (PATH, then the usual
    install locations)."""
    found = shutil.which(go) if go else locate("go")
    if found is not None:
        return found
    wanted = go or "go (on PATH, /usr/local/go/bin/go or /usr/lib/go/bin/go)"
    raise GoBuildError(
        f"Go toolchain not found: {wanted}; install Go >= 1.22 (e.g. apt-get install golang-go) "
        "to build the Go reference server"
    )


def go_env(cache_dir: Path, go: str | None = None, base: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for go commands: static binaries, local toolchain only, caches somewhere writable.

    Go's own build and module caches (under HOME) are used when they can be created; when
    not (no HOME, read-only HOME, HOME=/proc), both move under cache_dir.
    """
    env = dict(os.environ if base is None else base)
    env["GOFLAGS"] = GOFLAGS
    env["CGO_ENABLED"] = "0"  # static binaries; no C compiler needed
    env["GOTOOLCHAIN"] = "local"  # never download another toolchain (ignored before Go 1.21)
    if go is not None:
        found = _run([go, "env", "GOCACHE", "GOMODCACHE"], env=env, what="go env").splitlines()
        gocache, gomodcache = (found + ["", ""])[:2]
        if not _creatable(gocache):
            env["GOCACHE"] = str(cache_dir / "gocache")
        if not _creatable(gomodcache):
            env["GOPATH"] = str(cache_dir / "gopath")
            env["GOMODCACHE"] = str(cache_dir / "gopath" / "pkg" / "mod")
    return env


def _creatable(path: str) -> bool:
    """True when path is an absolute directory that exists or can be made (and written)."""
    if not path or not os.path.isabs(path):
        return False
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError:
        return False
    return True


def _run(argv: list[str], *, env: dict[str, str], cwd: Path | None = None, what: str) -> str:
    try:
        done = subprocess.run(
            argv, env=env, cwd=cwd, capture_output=True, text=True, check=False, timeout=BUILD_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        raise GoBuildError(f"{what} did not finish within {BUILD_TIMEOUT_S:g}s") from None
    except OSError as exc:
        raise GoBuildError(f"{what} could not start: {exc}") from None
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-20:])
        raise GoBuildError(f"{what} failed with exit code {done.returncode}:\n{tail}")
    return done.stdout


def go_install(module: str, version: str, directory: Path, go: str | None = None) -> Path:
    """`go install MODULE@VERSION` into `directory` (the tool cache), with the reference build's
    Go environment; returns the directory, where the command's binary now is."""
    found = find_go(go)
    directory.mkdir(parents=True, exist_ok=True)
    env = {**go_env(directory, found), "GOBIN": str(directory)}
    _run([found, "install", f"{module}@{version}"], env=env, what=f"go install {module}@{version}")
    return directory


def source_files(source_dir: Path = SOURCE_DIR) -> list[Path]:
    """The files a build depends on, relative to source_dir, sorted."""
    files = [p for p in source_dir.rglob("*") if p.is_file() and (p.suffix == ".go" or p.name in ("go.mod", "go.sum"))]
    return sorted(p.relative_to(source_dir) for p in files)


def source_hash(go_version: str, platform: str, source_dir: Path = SOURCE_DIR) -> str:
    digest = hashlib.sha256(f"{go_version}\0{platform}\0".encode())
    for rel in source_files(source_dir):
        digest.update(rel.as_posix().encode() + b"\0")
        digest.update((source_dir / rel).read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def pgx_version(source_dir: Path = SOURCE_DIR) -> str:
    match = re.search(rf"^\s*(?:require\s+)?{re.escape(PGX_MODULE)}\s+(\S+)", (source_dir / "go.mod").read_text(), re.M)
    return match.group(1) if match else "unknown"


def build_go_binaries(cache_dir: Path, go: str | None = None) -> GoBinaries:
    """Build (or reuse) cmd/reference and cmd/upstream under cache_dir; see the module doc."""
    go_cmd = find_go(go)
    cache_dir = cache_dir.resolve()
    cache_dir.mkdir(parents=True, exist_ok=True)
    env = go_env(cache_dir, go_cmd)
    version_out = _run([go_cmd, "env", "GOVERSION", "GOOS", "GOARCH"], env=env, what="go env").split()
    if len(version_out) != 3:
        raise GoBuildError(f"unexpected `go env` output from {go_cmd}: {version_out!r}")
    go_version, goos, goarch = version_out
    platform = f"{goos}/{goarch}"
    key = source_hash(go_version, platform)
    out_dir = cache_dir / f"go-{key}"

    def result(cached: bool) -> GoBinaries:
        return GoBinaries(
            reference=out_dir / "reference", upstream=out_dir / "upstream", replay=out_dir / "replay",
            shapes=out_dir / "shapes", go=go_cmd, go_version=go_version,
            platform=platform, pgx_version=pgx_version(), source_hash=key, cached=cached,
        )

    with open(cache_dir / ".go-build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one build at a time; a waiter then finds it cached
        if (out_dir / "build.json").exists() and all(os.access(out_dir / c, os.X_OK) for c in COMMANDS):
            return result(cached=True)
        scratch = Path(tempfile.mkdtemp(prefix="go-build-", dir=cache_dir))
        try:
            src = scratch / "src"
            for rel in source_files():
                (src / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(SOURCE_DIR / rel, src / rel)
            bin_dir = scratch / "bin"
            for command in COMMANDS:
                _run(
                    [go_cmd, "build", "-trimpath", "-o", str(bin_dir / command), f"./cmd/{command}"],
                    env=env, cwd=src, what=f"go build ./cmd/{command}",
                )
            built = result(cached=False)
            meta = {"go": go_cmd, "go_version": go_version, "platform": platform,
                    "pgx_version": built.pgx_version, "source_hash": key}
            (bin_dir / "build.json").write_text(json.dumps(meta, indent=2) + "\n")
            if out_dir.exists():  # a half-finished earlier attempt
                shutil.rmtree(out_dir)
            bin_dir.rename(out_dir)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
    return built
