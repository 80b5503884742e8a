"""The Python interpreters on this machine, found where people keep them, and the one a `python`
knob value names.

Looked for, in this order of preference between two of the same version: the cache's own builds
(`pywebbench python install`), pyenv's versions, uv's managed Pythons, PATH, then /usr/bin and
/usr/local/bin. Each is asked what it is (it may be a shim, a symlink or a stub): implementation,
version, whether it is free-threaded, its real executable (the same interpreter found twice is
listed once) and whether it is a virtualenv's (left out: a stack's environment is built on a base
interpreter).
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.plan.interpreter_names import PYPY, PythonWant, parse_python
from pywebbench.stage.envs import cache_root

PROBE_TIMEOUT_S = 10.0
SYSTEM_DIRS = (Path("/usr/bin"), Path("/usr/local/bin"))
_EXECUTABLE = re.compile(r"^(python|pypy)(\d+(\.\d+)?t?)?$")
# Python 2.7 to 3.14 and PyPy alike: one line, the real path last (it may hold spaces).
PROBE = ("import os, platform, sys, sysconfig\n"
         "impl = getattr(sys, 'implementation', None)\n"
         "iv = '.'.join(map(str, impl.version[:3])) if impl else platform.python_version()\n"
         "ft = 1 if sysconfig.get_config_var('Py_GIL_DISABLED') else 0\n"
         "venv = 1 if getattr(sys, 'base_prefix', sys.prefix) != sys.prefix else 0\n"
         "print('%s %s %d %s %d %s' % (platform.python_implementation().lower(), platform.python_version(), ft, iv,"
         " venv, os.path.realpath(sys.executable)))\n")


@dataclass(frozen=True)
class Interpreter:
    path: str
    """The executable as found (a stack's environment is made with it)."""
    implementation: str
    version: tuple[int, ...]
    free_threaded: bool
    where: str
    """pywebbench (the cache's builds), pyenv, uv, PATH or the system directory it is in."""
    real: str
    """Its real executable: what /proc/PID/exe of a server on it shows."""
    implementation_version: str = ""

    @property
    def name(self) -> str:
        """'3.11.7', '3.14.7t', 'pypy3.9.16 (PyPy 7.3.11)': how tables and refusals say it."""
        version = ".".join(map(str, self.version))
        if self.implementation == PYPY:
            return f"pypy{version} (PyPy {self.implementation_version})"
        return version + ("t" if self.free_threaded else "")


def candidates(path_env: str, home: Path, cache: Path, env: Mapping[str, str]) -> list[tuple[str, Path]]:
    """(where, executable) of every place looked in, most preferred first; not yet asked."""
    found: list[tuple[str, Path]] = []
    for build in sorted((cache / "pythons").glob("*/bin/python3.*"), key=lambda p: (p.parent, -len(p.name))):
        if re.fullmatch(r"python3\.\d+t?", build.name):
            found.append(("pywebbench", build))
    pyenv = Path(env.get("PYENV_ROOT") or home / ".pyenv") / "versions"
    for version in sorted(pyenv.glob("*")):
        exe = next((version / "bin" / n for n in ("python3", "python", "pypy3") if (version / "bin" / n).exists()), None)
        if exe is not None:
            found.append(("pyenv", exe))
    uv_dir = env.get("UV_PYTHON_INSTALL_DIR") or str(Path(env.get("XDG_DATA_HOME") or home / ".local/share") / "uv/python")
    for install in sorted(Path(uv_dir).glob("*")):
        exe = install / "bin" / "python3"
        if exe.exists():
            found.append(("uv", exe))
    dirs = [("PATH", Path(d)) for d in path_env.split(os.pathsep) if d] + [(str(d), d) for d in SYSTEM_DIRS]
    for where, directory in dirs:
        try:
            names = sorted(p for p in directory.iterdir() if _EXECUTABLE.match(p.name))
        except OSError:
            continue
        found += [(where, p) for p in names if os.access(p, os.X_OK) and p.is_file()]
    return found


def probe(where: str, exe: Path, env: Mapping[str, str] | None = None) -> Interpreter | None:
    """What the executable says it is; None when it does not run or is a virtualenv's."""
    try:
        done = subprocess.run([str(exe), "-c", PROBE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              check=False, stdin=subprocess.DEVNULL, env=dict(env) if env is not None else None)
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.strip().split(" ", 5) if done.returncode == 0 else []
    if len(parts) != 6 or parts[4] == "1" or not re.fullmatch(r"\d+(\.\d+)*\S*", parts[1]):
        return None
    version = tuple(int(p) for p in re.findall(r"\d+", parts[1])[:3])
    return Interpreter(str(exe), parts[0], version, parts[2] == "1", where, parts[5], parts[3])


def discover(path_env: str | None = None, home: Path | None = None, cache: Path | None = None,
             env: Mapping[str, str] | None = None) -> tuple[Interpreter, ...]:
    """Every interpreter found, each once (its most preferred place), oldest version first."""
    env = os.environ if env is None else env
    places = candidates(env.get("PATH", "") if path_env is None else path_env, home or Path.home(),
                        cache or cache_root(), env)
    clean = {k: v for k, v in env.items() if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV")}
    with ThreadPoolExecutor(max_workers=8) as pool:
        asked = list(pool.map(lambda place: probe(place[0], place[1], clean), places))
    unique: dict[object, Interpreter] = {}
    for found in asked:
        if found is not None and (key := _identity(found.real)) not in unique:
            unique[key] = found
    return tuple(sorted(unique.values(), key=lambda i: (i.implementation != "cpython", i.version, i.free_threaded)))


def _identity(real: str) -> object:
    """One interpreter under two names (a hard link, as make install leaves python3.14t) is one."""
    try:
        stat = os.stat(real)
    except OSError:
        return real
    return (stat.st_dev, stat.st_ino)


_found: tuple[Interpreter, ...] | None = None


def installed() -> tuple[Interpreter, ...]:
    """discover() of this machine, once per process (a run resolves each value many times)."""
    global _found
    if _found is None:
        _found = discover()
    return _found


def choose(want: PythonWant, found: Sequence[Interpreter]) -> Interpreter | None:
    """The interpreter a value names: a path as it is, else the newest of the version asked,
    the most preferred place among equals (the cache's builds, pyenv, uv, PATH, system)."""
    if want.path is not None:
        path = Path(want.path)
        return probe("given", path) if path.is_file() and os.access(path, os.X_OK) else None
    matching = [i for i in found if want.matches(i.implementation, i.version, i.free_threaded)]
    places = ["pywebbench", "pyenv", "uv", "PATH"]
    return max(matching, default=None,
               key=lambda i: (i.version, -(places.index(i.where) if i.where in places else len(places))))


def resolve(text: str, found: Sequence[Interpreter] | None = None) -> Interpreter:
    """The interpreter of a `python` value, or one line saying what was found instead."""
    want = parse_python(text)
    found = installed() if found is None else found
    chosen = choose(want, found)
    if chosen is not None:
        return chosen
    if want.path is not None:
        raise UserError(f"python: {want.path} is not an interpreter that runs here")
    names = ", ".join(dict.fromkeys(i.name for i in found)) or "none"
    hint = f" (`pywebbench python install {want.text}` builds it)" if want.free_threaded else ""
    raise UserError(f"python: no interpreter here is {want.text}{hint}; found: {names}")
