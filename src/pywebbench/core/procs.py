"""Child processes: each in its own process group, stopped TERM -> grace -> KILL, then reaped."""

from __future__ import annotations

import functools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import FrameType, TracebackType
from typing import IO, Any

import psutil

from pywebbench.core import orphans

DEFAULT_GRACE_S = 5.0


def free_port(host: str = "127.0.0.1") -> int:
    """A port the kernel just gave out; good enough for a child that binds it next."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def tail(path: Path, lines: int = 20) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def describe_exit(code: int) -> str:
    """A Popen return code as words: 'exited (signal 9, SIGKILL)' or 'exited with code 1'."""
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"exited (signal {-code})"
        return f"exited (signal {-code}, {name})"
    return f"exited with code {code}"


class ManagedProcess:
    """A child in its own process group whose whole tree is gone after stop().

    Own process group: a Ctrl-C at the terminal reaches only the harness, which then stops
    the children in order, and one killpg reaches every worker a server forked.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        env: Mapping[str, str],
        log_dir: Path,
        name: str,
        cwd: Path | None = None,
        grace_s: float = DEFAULT_GRACE_S,
        user: str | None = None,
        hold_stdin: bool = False,
        pipe_stdout: bool = False,
    ) -> None:
        self.argv = list(argv)
        self.env = dict(env)
        self.name = name
        self.cwd = cwd
        self.grace_s = grace_s
        self.user = user
        self.hold_stdin = hold_stdin
        """stdin a pipe the harness holds until stop(): the child sees it end when the harness dies."""
        self.pipe_stdout = pipe_stdout
        """stdout a pipe the harness reads (a channel's lines) instead of the log file."""
        log_dir.mkdir(parents=True, exist_ok=True)
        self.stdout_path = log_dir / f"{name}.stdout.log"
        self.stderr_path = log_dir / f"{name}.stderr.log"
        self._popen: subprocess.Popen[bytes] | None = None
        self._stopped: int | None = None
        self._known: dict[int, psutil.Process] = {}

    @property
    def pid(self) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.name} was not started")
        return self._popen.pid

    def start(self) -> ManagedProcess:
        with open(self.stdout_path, "wb", opener=_private) as out, open(self.stderr_path, "wb", opener=_private) as err:
            self._popen = subprocess.Popen(
                _dies_with_harness(self.argv, self.env, self.cwd),
                env=self.env,
                cwd=self.cwd,
                stdin=subprocess.PIPE if self.hold_stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE if self.pipe_stdout else out,
                stderr=err,
                process_group=0,
                close_fds=True,
                **_identity(self.user),
            )
        orphans.record_group(self._popen.pid, self.name)  # for the guard, should the harness be killed
        return self

    def poll(self) -> int | None:
        return None if self._popen is None else self._popen.poll()

    @property
    def stdin(self) -> IO[bytes]:
        """The held stdin's write end (hold_stdin)."""
        if self._popen is None or self._popen.stdin is None:
            raise RuntimeError(f"{self.name} holds no stdin")
        return self._popen.stdin

    @property
    def stdout(self) -> IO[bytes]:
        """The piped stdout's read end (pipe_stdout)."""
        if self._popen is None or self._popen.stdout is None:
            raise RuntimeError(f"{self.name} pipes no stdout")
        return self._popen.stdout

    def wait(self, timeout: float | None = None) -> int:
        if self._popen is None:
            raise RuntimeError(f"{self.name} was not started")
        return self._popen.wait(timeout)

    def tree(self) -> list[psutil.Process]:
        """The child and its descendants, remembered so stop() also reaches escapees."""
        try:
            root = psutil.Process(self.pid)
            found = [root, *root.children(recursive=True)]
        except psutil.Error:
            found = []
        for proc in found:
            self._known.setdefault(proc.pid, proc)
        return found

    def stderr_tail(self, lines: int = 20) -> str:
        return tail(self.stderr_path, lines)

    def terminate(self) -> None:
        """SIGTERM to the group without waiting: several children then wind down at once, and
        each stop() that follows finds its child already going."""
        if self._popen is not None and self._stopped is None and self._popen.poll() is None:
            _signal_group(self._popen.pid, signal.SIGTERM)

    def stop(self) -> int | None:
        """SIGTERM to the group, a grace period, SIGKILL, then reap. Idempotent."""
        if self._popen is None:
            return None
        if self._stopped is not None:
            return self._stopped  # its group id may belong to someone else by now
        self.tree()
        pgid = self._popen.pid
        _signal_group(pgid, signal.SIGTERM)
        deadline = time.monotonic() + self.grace_s
        while time.monotonic() < deadline:
            if self._popen.poll() is not None and not _group_alive(pgid):
                break
            time.sleep(0.05)
        _signal_group(pgid, signal.SIGKILL)
        for proc in self._known.values():
            _kill_if_same(proc)
        code = self._popen.wait()
        for pipe in (self._popen.stdin, self._popen.stdout):
            if pipe is not None:
                try:
                    pipe.close()
                except OSError:
                    pass  # a held stdin whose reader has gone: nothing left to flush
        if _wait_group_gone(pgid, timeout_s=5.0):
            orphans.forget_group(pgid)  # a group still there stays recorded: the run's guard tries again
        self._stopped = code
        return code

    def __enter__(self) -> ManagedProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def _identity(user: str | None) -> dict[str, Any]:
    """Popen arguments that run the child as `user`, with that user's groups, not root's.

    Needed for servers that refuse to run as root (PostgreSQL, PgBouncer); switching needs
    root, so naming the current user changes nothing.
    """
    if user is None:
        return {}
    entry = pwd.getpwnam(user)
    if entry.pw_uid == os.geteuid():
        return {}
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": os.getgrouplist(user, entry.pw_gid)}


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _group_alive(pgid: int) -> bool:
    """True while any process (zombies excepted) is left in the group."""
    for proc in psutil.process_iter(["pid", "status"]):
        try:
            if os.getpgid(proc.pid) == pgid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                return True
        except (ProcessLookupError, psutil.Error):
            continue
    return False


def _wait_group_gone(pgid: int, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)
    return True


_PRCTL_THEN_EXEC = (
    "import ctypes, os, sys\n"
    "ctypes.CDLL(None, use_errno=True).prctl(1, 9)\n"  # PR_SET_PDEATHSIG = 1, SIGKILL = 9
    "os.execvp(sys.argv[1], sys.argv[1:])\n"
)


def _dies_with_harness(argv: list[str], env: Mapping[str, str], cwd: Path | None) -> list[str]:
    """argv behind a wrapper that sets PR_SET_PDEATHSIG (SIGKILL) and execs it, same pid: the
    child dies with the harness, even a SIGKILLed one. Its own forks (a server's workers) do not
    inherit it: the run's guard (core/orphans.py) stops those."""
    if threading.current_thread() is not threading.main_thread():
        return argv  # the signal follows the *thread* that forked the child: it would die with that thread
    if not _findable(argv[0], env, cwd):
        return argv  # Popen's own FileNotFoundError, which callers report
    setpriv = _setpriv()
    if setpriv is not None:
        return [setpriv, "--pdeathsig", "KILL", "--", *argv]
    return [sys.executable, "-I", "-S", "-c", _PRCTL_THEN_EXEC, *argv]


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv (an exec, ~1 ms), when it can set the parent-death signal (2.33 on)."""
    found = shutil.which("setpriv")
    if found is None:
        return None
    try:
        usage = subprocess.run([found, "--help"], capture_output=True, text=True, timeout=5, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    return found if "--pdeathsig" in usage else None


def _findable(program: str, env: Mapping[str, str], cwd: Path | None) -> bool:
    """Would Popen find `program` (on the child's PATH, or relative to its cwd)?"""
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else (cwd or Path.cwd()) / program
        return path.is_file() and os.access(path, os.X_OK)
    return shutil.which(program, path=os.pathsep.join(os.get_exec_path(dict(env)))) is not None


def _kill_if_same(proc: psutil.Process) -> None:
    """SIGKILL a remembered descendant unless its pid now belongs to someone else."""
    try:
        if proc.is_running():
            proc.kill()
    except psutil.Error:
        pass


def _private(path: str, flags: int) -> int:
    """Logs 0600: a private service's log is no other local user's business."""
    return os.open(path, flags, 0o600)


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextmanager
def stop_signals() -> Iterator[None]:
    """SIGTERM, SIGHUP and SIGINT all end a run as an interruption (KeyboardInterrupt), whatever
    was set before."""
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    # A closed terminal (SIGHUP) would otherwise end us at once, leaving every server,
    # service and generator (each in its own process group) running.
    previous_hup = signal.signal(signal.SIGHUP, _raise_interrupt)
    # Ctrl-C must stop a run even when the shell started us with SIGINT ignored (a
    # background job of a script), or a stop request would be silently dropped.
    previous_int = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGHUP, previous_hup)
        signal.signal(signal.SIGINT, previous_int)
