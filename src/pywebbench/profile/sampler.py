"""py-spy on a running server: every process of it, for a bounded time, its samples in a file
of the run folder.

One py-spy per process of the server as the window starts (its master and every worker), their
samples written into one file. One py-spy on the master with --subprocesses would follow a
worker started during the window too, but with --native it died of SIGSEGV in 5 of 6 30-s
profiled windows of gunicorn sync serving examples/notes here (py-spy 0.4.3), where one py-spy per
worker process ran 30 s without one (2 of 2, by hand); a worker that starts mid-window is not
sampled. Each runs in its own process group (procs.ManagedProcess: it dies with the harness), is
started and attached before the load begins, and stopped with SIGINT (py-spy writes its file on
Ctrl-C, not on SIGTERM) when the load ends; --duration bounds it should that signal never come.

--native (C extensions' and the C library's frames, so the kernel and system calls can be told
apart) makes py-spy pause each process at each sample; where it cannot (an unsupported
platform), the sampler falls back to --nonblocking Python frames and says so.
"""

from __future__ import annotations

import math
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from pywebbench.core.procs import ManagedProcess
from pywebbench.stage import tools

RATE_HZ = 100
"""Samples per second per process: py-spy's default. The window's overhead is measured and shown."""
ATTACH_TIMEOUT_S = 10.0
STOP_TIMEOUT_S = 15.0
_SAMPLES = re.compile(r"Samples: (\d+) Errors: (\d+)")


class SamplerError(RuntimeError):
    """py-spy could not sample the server (said in one line)."""


class NativeUnwindCrash(SamplerError):
    """py-spy --native died of a signal of its own mid-window (SIGSEGV in its native unwinder:
    seen here on gunicorn sync serving examples/notes, about one 30 s window in two, never without
    --native). The window is worth loading again with Python frames only."""


CRASH_SIGNALS = frozenset({signal.SIGSEGV, signal.SIGBUS, signal.SIGABRT, signal.SIGILL})


def locate() -> str | None:
    """py-spy on PATH, else beside the harness's interpreter (the wheel's binary in .venv/bin)."""
    return tools.locate("py-spy")


def version(py_spy: str) -> str:
    try:
        out = subprocess.run([py_spy, "--version"], capture_output=True, text=True, timeout=10, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return "py-spy"
    return out.strip() or "py-spy"


_PROBE = "import sys, sysconfig; print(sys.implementation.name, int(bool(sysconfig.get_config_var('Py_GIL_DISABLED'))))"


def unreadable(pid: int) -> str | None:
    """Why py-spy cannot read this process, in one line (None: a CPython it reads).

    py-spy 0.4 reads CPython with the GIL: not PyPy, not a free-threaded build, not a native
    server. The interpreter is asked itself (its /proc exe, only if it is named python*)."""
    try:
        exe = os.readlink(f"/proc/{pid}/exe")
    except OSError as exc:
        return f"its process {pid} cannot be read ({exc.strerror or exc})"
    name = Path(exe.removesuffix(" (deleted)")).name
    if name.startswith("pypy"):
        return f"PyPy ({name}): py-spy reads CPython only"
    if not name.startswith("python"):
        return f"its server is not Python ({name}): nothing for a Python sampler to read"
    try:
        probe = subprocess.run([exe, "-I", "-S", "-c", _PROBE], capture_output=True, text=True, timeout=20,
                               check=False).stdout.split()
    except (OSError, subprocess.SubprocessError) as exc:
        return f"its interpreter {exe} could not be asked what it is ({exc})"
    if probe[:1] != ["cpython"]:
        return f"{probe[0] if probe else 'an unknown'} interpreter: py-spy reads CPython only"
    if probe[1:2] == ["1"]:
        return "a free-threaded CPython build: py-spy 0.4 cannot read it"
    return None


@dataclass(frozen=True)
class Sampled:
    """What py-spy wrote and said."""

    path: Path
    samples: int
    errors: int
    """Samples py-spy could not read (a process changing under it)."""
    native: bool
    command: tuple[str, ...]
    python_only_because: str = ""
    """Why a recording asked for native frames has Python frames only ("" when native)."""


class Recording:
    """py-spy recording one server while the `with` block runs (the load goes inside it)."""

    def __init__(self, py_spy: str, pid: int, out: Path, *, bound_s: float, rate_hz: int = RATE_HZ,
                 native: bool = True, python_only_because: str = "") -> None:
        self.py_spy, self.pid, self.out = py_spy, pid, out
        self.bound_s = max(1, math.ceil(bound_s))  # py-spy takes whole seconds
        self.rate_hz = rate_hz
        self.native = native
        self.python_only_because = python_only_because
        self._procs: dict[int, ManagedProcess] = {}
        self.result: Sampled | None = None

    def argv(self, native: bool, pid: int | None = None) -> list[str]:
        target = self.pid if pid is None else pid
        return [self.py_spy, "record", "--pid", str(target), "--rate", str(self.rate_hz),
                "--duration", str(self.bound_s), "--format", "raw", "--full-filenames",
                *(["--native"] if native else ["--nonblocking"]), "--output", str(self._part(target))]

    def _part(self, pid: int) -> Path:
        return self.out.with_name(f"{self.out.name}.{pid}")

    def __enter__(self) -> Recording:
        self.out.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._procs[self.pid] = self._attach(self.native, self.pid)
        except SamplerError:
            if not self.native:
                raise
            self.native = False  # no native unwinding here: Python frames only, without pausing
            self.python_only_because = "no native unwinding on this platform"
            self._procs[self.pid] = self._attach(False, self.pid)
        for pid in _descendants(self.pid):
            try:
                self._procs[pid] = self._attach(self.native, pid)
            except SamplerError:
                continue  # a worker that ended between the listing and the attach: nothing to sample
        return self

    def _attach(self, native: bool, pid: int) -> ManagedProcess:
        proc = ManagedProcess(self.argv(native, pid), env=dict(os.environ), log_dir=self.out.parent,
                              name=f"py-spy-{pid}").start()
        deadline = time.monotonic() + ATTACH_TIMEOUT_S
        while time.monotonic() < deadline:
            said = _said(proc)
            if "Sampling process" in said:
                return proc
            if proc.poll() is not None:
                proc.stop()
                raise SamplerError(_first_error(_said(proc)) or f"py-spy exited with code {proc.poll()}")
            time.sleep(0.02)
        proc.stop()
        raise SamplerError(f"py-spy did not attach to {pid} within {ATTACH_TIMEOUT_S:.0f} s")

    def __exit__(self, *exc: object) -> None:
        if not self._procs:
            return
        for proc in self._procs.values():
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGINT)  # py-spy writes its output on Ctrl-C
        samples = errors = 0
        problems: list[str] = []
        crashed: str | None = None
        with self.out.open("w") as merged:
            for pid, proc in self._procs.items():
                got, why, crash = self._collect(proc, self._part(pid))
                if got is None:
                    problems.append(why)
                    crashed = crashed or crash
                    continue
                samples, errors = samples + got[0], errors + got[1]
                merged.write(self._part(pid).read_text(errors="replace"))
                self._part(pid).unlink(missing_ok=True)
        if crashed is not None:  # a side sampled otherwise than the rest would not compare: load it again
            raise NativeUnwindCrash(crashed)
        if samples == 0 and problems:
            raise SamplerError(problems[0])
        self.result = Sampled(self.out, samples, errors, self.native, tuple(self.argv(self.native)),
                              self.python_only_because)

    def _collect(self, proc: ManagedProcess, part: Path) -> tuple[tuple[int, int] | None, str, str | None]:
        """((samples, errors) or None, why none, the crash if py-spy --native died of one)."""
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            pass
        code = proc.stop()
        said = _said(proc)
        found = _SAMPLES.search(said)
        if found is not None and part.exists():
            return (int(found.group(1)), int(found.group(2))), "", None
        if self.native and code is not None and -code in CRASH_SIGNALS:
            return None, "", f"py-spy --native crashed ({signal.Signals(-code).name})"
        # its exit says how it ended: by the signal (-2), killed at the end of the wait (-9), or on its own
        return None, _first_error(said) or f"py-spy wrote no samples (it exited with {code})", None


def _descendants(pid: int) -> list[int]:
    """The server's other processes (its workers), as the window starts."""
    try:
        return [child.pid for child in psutil.Process(pid).children(recursive=True)]
    except psutil.Error:
        return []


def _said(proc: ManagedProcess) -> str:
    text = ""
    for path in (proc.stdout_path, proc.stderr_path):
        try:
            text += path.read_text(errors="replace")
        except OSError:
            continue
    return text


def _first_error(text: str) -> str:
    """py-spy's own error line (it prints a backtrace after it)."""
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("Error:"):
            return line.removeprefix("Error:").strip()
    lines = [ln.strip() for ln in text.splitlines() if ln.strip() and not ln.startswith("py-spy>")]
    return lines[0] if lines else ""
