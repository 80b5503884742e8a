"""Packages the registry cannot give us working on this Python, built once by the harness.

meinheld 1.0.2 (its last release, 2020) bundles greenlet 0.4's `greenlet.h`. Built against
greenlet 3 as shipped, it serves /hello but every cooperative wait (a DB query, an upstream
call) reads the greenlet struct at 0.4's offsets: "TypeError: bad argument type" and
SIGSEGV in the workers. Rebuilt with greenlet 3's own header it works. The rebuilt wheel
carries a local version, `1.0.2+greenlet3`, so results say which meinheld ran.
"""

from __future__ import annotations

import fcntl
import re
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

from pywebbench.catalog.servers import MEINHELD  # the catalog pins it; this module builds it

GREENLET = "greenlet==3.5.6"


class PatchedBuildError(Exception):
    pass


def _run(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> None:
    done = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False,
                          stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()][-4:]
        raise PatchedBuildError(f"{' '.join(argv[:4])} failed: {' | '.join(lines)}")


def build_meinheld(wheelhouse: Path, python: str, uv: str, env: dict[str, str]) -> None:
    with tempfile.TemporaryDirectory(prefix="pywebbench-meinheld-") as tmp:
        work = Path(tmp)
        # uv has no "download"; pip (run by uv, never installed globally) fetches the sdist.
        _run([uv, "tool", "run", "--quiet", "--python", python, "--from", "pip", "pip", "download",
              "--quiet", "--no-deps", "--no-binary", ":all:", "meinheld==1.0.2", "-d", str(work)], env)
        sdist = next(work.glob("meinheld-1.0.2.tar.gz"))
        shutil.unpack_archive(sdist, work)
        src = work / "meinheld-1.0.2"
        _run([uv, "venv", "--quiet", "--python", python, str(work / "gl")], env)
        _run([uv, "pip", "install", "--quiet", "--python", str(work / "gl" / "bin" / "python"), GREENLET], env)
        header = next((work / "gl").glob("lib/python*/site-packages/greenlet/greenlet.h"))
        shutil.copy(header, src / "meinheld" / "server" / "greenlet.h")
        setup = (src / "setup.py").read_text()
        setup = setup.replace("'greenlet>=0.4.5,<0.5'", "'greenlet>=3'")
        setup = re.sub(r'version="1\.0\.2"', 'version="1.0.2+greenlet3"', setup)
        (src / "setup.py").write_text(setup)
        _run([uv, "build", "--quiet", "--wheel", "--python", python, "-o", str(wheelhouse), str(src)], env)


def _wheel_tag(python: str, env: dict[str, str]) -> str:
    """The interpreter's wheel tag: cp311, cp314t (free-threaded), pp39."""
    code = ("import sys, sysconfig; i = sys.implementation.name; v = '%d%d' % sys.version_info[:2]; "
            "print(('pp' if i == 'pypy' else 'cp') + v + ('t' if sysconfig.get_config_var('Py_GIL_DISABLED') else ''))")
    done = subprocess.run([python, "-c", code], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise PatchedBuildError(f"{python} does not start: {done.stderr.strip()[-200:]}")
    return done.stdout.strip()


BUILDERS: dict[str, Callable[[Path, str, str, dict[str, str]], None]] = {MEINHELD: build_meinheld}


def ensure_patched(requirements: tuple[str, ...], wheelhouse: Path, python: str, uv: str,
                   env: dict[str, str]) -> bool:
    """Build the patched wheels these requirements name; True when uv must look in wheelhouse."""
    wanted = [r for r in requirements if r in BUILDERS]
    if not wanted:
        return False
    wheelhouse.mkdir(parents=True, exist_ok=True)
    with open(wheelhouse / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tag = _wheel_tag(python, env)
        for requirement in wanted:
            name, _, version = requirement.partition("==")
            if not any(wheelhouse.glob(f"{name}-{version}-{tag}-*.whl")):  # one wheel per interpreter
                BUILDERS[requirement](wheelhouse, python, uv, env)
    return True
