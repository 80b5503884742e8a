"""`pywebbench python install 3.14t`: a CPython built once from source into the cache.

For an interpreter no one ships as a binary here (a free-threaded 3.14 on Debian 12): the upstream
tarball from the Debian mirror (stage/pysource.py) or a file given, configured with --disable-gil
for a name ending in 't', built with every CPU, installed under <cache>/pythons/<name>, and kept
only once it starts and, when free-threaded, says the GIL is off. Not PGO/LTO unless --optimized
(a distribution's build is so, and some 10-20% faster; the choice is recorded with the build).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.stage.envs import cache_root
from pywebbench.stage.pysource import fetch_tarball

MARKER = "pywebbench-python.json"
NAME = re.compile(r"^3\.(\d+)(t?)$")
# What CPython's configure needs for the modules a web stack imports (ssl, zlib, ctypes, sqlite3,
# bz2, lzma, readline, curses, uuid, dbm); Debian's names.
BUILD_PACKAGES = ("build-essential", "pkg-config", "libssl-dev", "zlib1g-dev", "libffi-dev", "libsqlite3-dev",
                  "libbz2-dev", "liblzma-dev", "libreadline-dev", "libncurses-dev", "uuid-dev", "libgdbm-dev",
                  "xz-utils")


@dataclass(frozen=True)
class BuiltPython:
    name: str  # "3.14t"
    version: str  # "3.14.7"
    executable: str
    free_threaded: bool
    gil_enabled: bool | None  # sys._is_gil_enabled() at start of the built interpreter
    source: str  # the tarball's URL or path
    sha256: str
    configure: tuple[str, ...]
    build_seconds: float


def pythons_root() -> Path:
    return cache_root() / "pythons"


def parse_name(name: str) -> tuple[str, bool]:
    """'3.14t' -> ('14', True); a one-line refusal for anything else."""
    match = NAME.match(name.strip())
    if match is None or int(match.group(1)) < 8:
        raise UserError(f"python install: {name!r} is not a CPython version such as 3.13, 3.14 or 3.14t "
                        "(t: free-threaded)")
    if match.group(2) and int(match.group(1)) < 13:
        raise UserError(f"python install: free-threaded builds start at 3.13, not {name}")
    return match.group(1), bool(match.group(2))


def installed(name: str, root: Path | None = None) -> BuiltPython | None:
    marker = (root or pythons_root()) / name / MARKER
    if not marker.exists():
        return None
    data = json.loads(marker.read_text())
    return BuiltPython(**{**data, "configure": tuple(data["configure"])})


def missing_packages(packages: tuple[str, ...] = BUILD_PACKAGES) -> list[str]:
    """The Debian packages of `packages` dpkg does not have installed (all of them without dpkg)."""
    missing = []
    for package in packages:
        done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", package], capture_output=True, text=True,
                              check=False) if shutil.which("dpkg-query") else None
        if done is None or "install ok installed" not in done.stdout:
            missing.append(package)
    return missing


def ensure_packages(say: Callable[[str], None]) -> None:
    """Installs what the build lacks as root; otherwise one line naming it and the apt line."""
    missing = missing_packages()
    if not missing:
        return
    line = f"apt-get install -y {' '.join(missing)}"
    if os.geteuid() != 0 or not shutil.which("apt-get"):
        raise UserError(f"python install: the build needs {', '.join(missing)}: sudo {line}")
    say(f"installing the build's packages: {line}")
    done = subprocess.run(["apt-get", "install", "-y", "-q", *missing], capture_output=True, text=True, check=False,
                          env={**os.environ, "DEBIAN_FRONTEND": "noninteractive"})
    if done.returncode != 0:
        raise UserError(f"python install: {line} failed: {(done.stderr.strip().splitlines() or ['?'])[-1]}")


def install(name: str, *, source: Path | None, optimized: bool, say: Callable[[str], None],
            root: Path | None = None, jobs: int | None = None) -> BuiltPython:
    """The build of `name`, from the cache when it is there, else built now (see the module)."""
    minor, free_threaded = parse_name(name)
    root = root or pythons_root()
    done = installed(name, root)
    if done is not None:
        say(f"{name} is installed: {done.executable} (CPython {done.version}, built in {done.build_seconds:.0f} s)")
        return done
    ensure_packages(say)
    if source is not None:
        tarball, origin, digest = source, str(source), ""
        if not source.is_file():
            raise UserError(f"python install: --source {source}: no such file")
    else:
        tarball, found = fetch_tarball(minor, root / "src")
        origin, digest = found.url, found.sha256
        say(f"source: {found.url} (SHA-256 checked against {found.checked_by})")
    prefix = root / name
    configure = ["--prefix", str(prefix), "--without-ensurepip", "--enable-shared",
                 f"LDFLAGS=-Wl,-rpath,{prefix / 'lib'}"]
    configure += ["--disable-gil"] if free_threaded else []
    configure += ["--enable-optimizations", "--with-lto"] if optimized else []
    start = time.monotonic()
    executable = _build(tarball, root / "build" / name, prefix, configure, jobs, say) / f"python3.{minor}{'t' if free_threaded else ''}"
    built = BuiltPython(name, _version(executable), str(executable), free_threaded,
                        _gil_enabled(executable) if free_threaded else None, origin, digest, tuple(configure),
                        round(time.monotonic() - start, 1))
    if free_threaded and built.gil_enabled is not False:
        shutil.rmtree(prefix, ignore_errors=True)
        raise UserError(f"python install: the build of {name} starts with the GIL enabled "
                        f"(sys._is_gil_enabled() is {built.gil_enabled}); not kept")
    (prefix / MARKER).write_text(json.dumps({**asdict(built), "configure": list(configure)}, indent=1))
    shutil.rmtree(root / "build" / name, ignore_errors=True)
    return built


def _build(tarball: Path, work: Path, prefix: Path, configure: list[str], jobs: int | None,
           say: Callable[[str], None]) -> Path:
    """configure, make and make install in `work`, output in <prefix>.build.log; its bin directory."""
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(prefix, ignore_errors=True)  # a build cut off half-way: start again
    work.mkdir(parents=True)
    # tar(1): Debian 12's Python 3.11.2 predates extractall's safe filter
    unpacked = subprocess.run(["tar", "-xf", str(tarball.resolve()), "--no-same-owner"], cwd=work,
                              capture_output=True, text=True, check=False)
    if unpacked.returncode != 0:
        raise UserError(f"python install: cannot unpack {tarball}: {unpacked.stderr.strip()[-200:]}")
    tree = next(p for p in work.iterdir() if p.is_dir())
    log = prefix.with_name(prefix.name + ".build.log")
    jobs = jobs or len(os.sched_getaffinity(0))
    with log.open("w") as out:
        for step in (["./configure", *configure], ["make", f"-j{jobs}"], ["make", "install"]):
            say(f"{' '.join(step[:2])} ... (log: {log})")
            out.write(f"$ {' '.join(step)}\n")
            out.flush()
            finished = subprocess.run(step, cwd=tree, stdout=out, stderr=subprocess.STDOUT, check=False,
                                      stdin=subprocess.DEVNULL)
            if finished.returncode != 0:
                raise UserError(f"python install: {' '.join(step[:2])} failed (exit {finished.returncode}); "
                                f"see {log}")
    return prefix / "bin"


def _version(executable: Path) -> str:
    return _ask(executable, "import platform; print(platform.python_version())")


def _gil_enabled(executable: Path) -> bool | None:
    answer = _ask(executable, "import sys; print(getattr(sys, '_is_gil_enabled', lambda: None)())")
    return {"True": True, "False": False}.get(answer)


def _ask(executable: Path, code: str) -> str:
    if not executable.exists():
        raise UserError(f"python install: make install left no {executable}")
    done = subprocess.run([str(executable), "-c", code], capture_output=True, text=True, check=False, timeout=60)
    if done.returncode != 0:
        raise UserError(f"python install: {executable} does not start: {done.stderr.strip()[-200:]}")
    return done.stdout.strip()
