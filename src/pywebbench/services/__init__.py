"""Private backing services (PostgreSQL, PgBouncer, nginx), each a context manager.

Every instance is ours alone: its own directory, config file and ports on 127.0.0.1,
started as a ManagedProcess and gone after exit. This module holds what they share; import
the services from their modules (`pywebbench.services.postgres`, ...).
"""

from __future__ import annotations

import os
import pwd
import subprocess
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from contextlib import ExitStack
from types import TracebackType
from typing import Generic, TypeVar

from pywebbench.core.procs import ManagedProcess, tail

HOST = "127.0.0.1"
# PostgreSQL and PgBouncer refuse to run as root; as root they run as the Debian package's user.
UNPRIVILEGED_USER = "postgres"


class ServiceError(RuntimeError):
    """A service failed to start or to answer: a one-line message, then its log tail."""

    def __init__(self, message: str, log_tail: str = "") -> None:
        super().__init__(f"{message}\n{log_tail}".rstrip())
        self.message = message
        self.log_tail = log_tail


def unprivileged_user() -> str | None:
    """Who runs a root-shy server: the postgres user when we are root, else ourselves (None)."""
    if os.geteuid() != 0:
        return None
    try:
        pwd.getpwnam(UNPRIVILEGED_USER)
    except KeyError:
        raise ServiceError(
            f"running as root, but there is no {UNPRIVILEGED_USER!r} user to run PostgreSQL and PgBouncer as"
        ) from None
    return UNPRIVILEGED_USER


def give_to(user: str | None, *paths: Path) -> None:
    """Hand files we wrote to the user the server runs as (no-op when that is us)."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    for path in paths:
        os.chown(path, entry.pw_uid, entry.pw_gid)


def private_dir(path: Path, user: str | None) -> None:
    """Make a service's own directory 0700, owned by the user it runs as: its configs, logs
    and data are no one else's to read (root, who writes them, needs no permission bits)."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    path.chmod(0o700)
    give_to(user, path)


def check_reachable(path: Path, user: str | None) -> None:
    """Fail early, with advice, when `user` cannot reach `path` (e.g. a work dir under /root)."""
    if user is None:
        return
    entry = pwd.getpwnam(user)
    probe = subprocess.run(
        ["test", "-x", str(path)], user=entry.pw_uid, group=entry.pw_gid,
        extra_groups=os.getgrouplist(user, entry.pw_gid), check=False, timeout=10,
    )
    if probe.returncode != 0:
        raise ServiceError(
            f"user {user!r} cannot reach {path}: every parent directory must be searchable by it "
            f"(chmod o+x), or choose a work directory under e.g. /tmp or /var/tmp"
        )


def tool_output(argv: Sequence[str]) -> str:
    """What a `--version`-style command prints (some print to stderr), stripped."""
    done = subprocess.run(list(argv), capture_output=True, text=True, check=False, timeout=30)
    return (done.stdout.strip() or done.stderr.strip())


def run_to_end(proc: ManagedProcess, *, timeout_s: float, what: str) -> None:
    """Run a one-shot command to completion; on failure or timeout raise with its log tail."""
    with proc:
        try:
            code = proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            raise ServiceError(f"{what} did not finish within {timeout_s:g}s", proc.stderr_tail()) from None
    if code != 0:
        raise ServiceError(f"{what} failed with exit code {code}", proc.stderr_tail())


def wait_until(
    ready: Callable[[], bool],
    *,
    proc: ManagedProcess,
    timeout_s: float,
    what: str,
    log: Path | None = None,
    interval_s: float = 0.05,
) -> None:
    """Poll `ready` until it holds; raise with the log tail (`log`, else stderr) if the process
    dies or time runs out."""
    deadline = time.monotonic() + timeout_s
    while True:
        code = proc.poll()
        if code is not None:
            raise ServiceError(f"{what} exited with code {code} while starting", _tail(proc, log))
        if ready():
            return
        if time.monotonic() > deadline:
            raise ServiceError(f"{what} was not ready within {timeout_s:g}s", _tail(proc, log))
        time.sleep(interval_s)


def _tail(proc: ManagedProcess, log: Path | None) -> str:
    return (tail(log) if log is not None else "") or proc.stderr_tail()


InfoT = TypeVar("InfoT")


class Service(Generic[InfoT]):
    """The lifecycle every backing service shares.

    A subclass's __enter__ starts its processes on an ExitStack (a failed start unwinds what
    had started), sets `_info` and keeps the stack in `_stack`; __exit__ here unwinds it.
    `info` is what the running service exposes, and an error when it is not running.
    """

    what = "the service"

    def __init__(self) -> None:
        self._info: InfoT | None = None
        self._stack = ExitStack()
        self._pids: list[int] = []
        self._proc: ManagedProcess | None = None
        """The service's main process (the one the watchdog polls)."""
        self._restarts = 0

    def poll(self) -> int | None:
        """None while running or once stopped on purpose; the return code if it died."""
        proc = self._proc
        if self._info is None or proc is None:
            return None
        code = proc.poll()
        # Stopped on purpose between the two looks: __exit__ forgets the info first.
        return None if self._info is None or proc is not self._proc else code

    def _replace(self, proc: ManagedProcess,
                 stop: Callable[[ManagedProcess], object] | None = None) -> ManagedProcess:
        """Stop the dead process's group (orphaned children too), start `proc` in its place,
        stopped with the service (by `stop`, else TERM, grace, KILL)."""
        if self._proc is not None:
            self._proc.stop()
        self._restarts += 1
        if stop is None:
            self._stack.enter_context(proc)
        else:
            proc.start()
            self._stack.callback(stop, proc)
        self._proc = proc
        self._pids[:] = [proc.pid]
        return proc

    def root_pids(self) -> tuple[int, ...]:
        """The processes this service started, for resource sampling of their trees."""
        return tuple(self._pids) if self._info is not None else ()

    @property
    def info(self) -> InfoT:
        if self._info is None:
            raise RuntimeError(f"{self.what} is not running")
        return self._info

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._info = None
        self._pids.clear()
        self._stack.close()
