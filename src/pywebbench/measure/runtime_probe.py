"""The interpreter a server's workers actually run, read back at each launch: /proc/PID/exe of a
worker (a leaf of the server's process tree; a symlinked venv python resolves to its base
interpreter), asked its version; for a server embedding Python (uWSGI), the libpython it mapped.
On a free-threaded build each worker is asked whether the GIL stayed off (apps/pwb_runtime.py
answers a SIGURG with sys._is_gil_enabled(); an extension module may have turned it back on)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import psutil

RUNTIME_ENV = "PWB_RUNTIME_DIR"
ANSWER_WAIT_S = 5.0
_ASK = ("import platform, sys, sysconfig; print(platform.python_implementation(), platform.python_version(), "
        "'t' if sysconfig.get_config_var('Py_GIL_DISABLED') else '-')")


@dataclass(frozen=True)
class Runtime:
    interpreter: str | None
    """'CPython 3.11.7 (/root/.pyenv/versions/3.11.7/bin/python3.11)'; None when unreadable."""
    free_threaded: bool = False
    gil: str | None = None
    """Free-threaded only: 'off', 'on' (a worker re-enabled it), or None (no worker answered)."""


_asked: dict[str, tuple[str, bool] | None] = {}


def workers(pids: Sequence[int]) -> list[int]:
    """The leaves of the processes' trees (the workers), or the processes themselves."""
    leaves: list[int] = []
    for pid in pids:
        try:
            tree = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            continue
        leaves += [p.pid for p in tree if not _has_children(p)]
    return list(dict.fromkeys(leaves))


def _has_children(process: psutil.Process) -> bool:
    try:
        return bool(process.children())
    except psutil.Error:
        return False


def interpreter_of(pid: int) -> tuple[str, bool] | None:
    """('CPython 3.11.7 (/path/python3.11)', free-threaded) of a process, None when not readable."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError:
        return None
    if exe not in _asked:
        _asked[exe] = _ask(exe) or _embedded(pid, exe)
    return _asked[exe]


def _ask(exe: str) -> tuple[str, bool] | None:
    try:
        done = subprocess.run([exe, "-c", _ASK], capture_output=True, text=True, timeout=20, check=False,
                              stdin=subprocess.DEVNULL, env={"PATH": os.environ.get("PATH", "")})
    except (OSError, subprocess.TimeoutExpired):
        return None
    parts = done.stdout.split()
    if done.returncode != 0 or len(parts) != 3:
        return None
    return f"{parts[0]} {parts[1]}{'t' if parts[2] == 't' else ''} ({exe})", parts[2] == "t"


def _embedded(pid: int, exe: str) -> tuple[str, bool] | None:
    """A server embedding Python: the libpython it mapped (free-threaded ones end in 't')."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return None
    found = sorted({line.split()[-1] for line in maps.splitlines() if "/libpython" in line})
    if not found:
        return None
    name = Path(found[0]).name
    return f"{Path(exe).name} embedding {found[0]}", "t.so" in name or "t.so." in name


def read_runtime(pids: Sequence[int], answers: Path | None, nudge: Callable[[], None] = lambda: None) -> Runtime:
    """What the server's workers run; on a free-threaded build, their GIL, asked through `answers`
    (the PWB_RUNTIME_DIR the server was started with); `nudge` sends the server a request."""
    leaves = workers(pids)
    found = next((i for pid in leaves if (i := interpreter_of(pid)) is not None), None)
    if found is None:
        return Runtime(None)
    text, free_threaded = found
    if not free_threaded or answers is None:
        return Runtime(text, free_threaded)
    return Runtime(text, True, ask_gil(leaves, answers, nudge))


def ask_gil(leaves: Sequence[int], answers: Path, nudge: Callable[[], None] = lambda: None,
            wait_s: float = ANSWER_WAIT_S) -> str | None:
    """'on' if any worker says the GIL is enabled, 'off' if those that answered say not, None if none did.

    Python runs a signal's handler when the worker next runs Python code: a worker waiting in a
    server's C loop (uWSGI's) only does so when a request reaches it, so requests are sent while
    the answers are awaited."""
    answers.mkdir(parents=True, exist_ok=True)
    for old in answers.glob("*.json"):
        old.unlink(missing_ok=True)
    deadline = time.monotonic() + wait_s
    said: dict[int, bool] = {}
    while time.monotonic() < deadline and len(said) < len(leaves):
        for pid in leaves:
            if pid not in said:  # again each turn: a worker still importing the app has no handler yet
                _signal(pid)
        time.sleep(0.1)
        for path in answers.glob("*.json"):
            try:
                data = json.loads(path.read_text())
                said[int(data["pid"])] = bool(data["gil_enabled"])
            except (OSError, ValueError, KeyError, TypeError):
                continue
        if len(said) < len(leaves):
            nudge()
    if not said:
        return None
    return "on" if any(said.values()) else "off"


def _signal(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGURG)  # ignored by a process without pwb_runtime's handler
    except OSError:
        pass


def poke(host: str, port: int, path: str, timeout_s: float) -> None:
    """One request on its own connection (answered or not: it only wakes a worker)."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s) as conn:
            conn.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n".encode())
            conn.recv(1024)
    except OSError:
        pass
