"""The app server's limits in a run: set on its role before each launch, read around each window.

`Confinement` is the runner's: it writes a session's --cpu-quota and --memory-limit on the
server's role (measure/cgroup_limits.py) before the server starts in it, and says once what the
memory limit bounds (swap). `ServerWatch` is a window's: the role's counters when the window's
work starts (its settle), when its load starts and when it ends, so throttling is the load's
alone and an OOM kill anywhere in the window names the window `server-oom`.
"""

from __future__ import annotations

import signal
from collections.abc import Callable

from pywebbench.measure.accounting import Accountant
from pywebbench.measure.cgroup_limits import LimitCounters, ServerLimits, oom_kills, swap_note, window_reading
from pywebbench.measure.cgroups import CgroupVersion
from pywebbench.plan.limits import format_bytes
from pywebbench.results.model import TrialSpec, TrialStatus
from pywebbench.results.server import ServerCgroup


def limits_of(spec: TrialSpec) -> ServerLimits:
    return ServerLimits(spec.cpu_quota, spec.memory_limit)


class Confinement:
    """Applies each launch's limits to its server's role; says what the memory limit bounds once."""

    def __init__(self, accountant: Accountant, on_note: Callable[[str], None]) -> None:
        self.accountant = accountant
        self.on_note = on_note
        self._said_swap = False
        self._applied: dict[str, LimitCounters | None] = {}

    def apply(self, role: str, spec: TrialSpec) -> None:
        """Before the server starts in `role` (CgroupError where the controllers are missing)."""
        limits = limits_of(spec)
        self.accountant.confine(role, limits)
        self._applied[role] = self.accountant.counters(role) if limits.memory_limit is not None else None
        if limits.memory_limit is not None and not self._said_swap:
            self._said_swap = True
            self.on_note(f"memory limit: {swap_note(CgroupVersion(self.accountant.source))}")


    def failed_start(self, role: str, error: str) -> tuple[TrialStatus, str]:
        """A server that did not come up: server-oom when the kernel killed its processes for its
        memory limit since `apply` (a limit below what it needs to start), else server-failed."""
        before = self._applied.get(role)
        after = self.accountant.counters(role) if before is not None else None
        kills = oom_kills(before, after, killed=True) if before is not None and after is not None else 0
        if not kills:
            return TrialStatus.SERVER_FAILED, error
        return TrialStatus.SERVER_OOM, (f"the kernel killed {kills} process(es) of the server for going over its "
                                        f"memory limit while it started\n{error}")


class ServerWatch:
    """One window's readings of the app server's role (nothing without cgroups)."""

    def __init__(self, accountant: Accountant, role: str, *, local: bool = True) -> None:
        self.accountant = accountant
        self.role = role
        self.started = accountant.counters(role) if local else None  # another host's server: not read here
        self.opened: LimitCounters | None = None
        self.closed: LimitCounters | None = None

    def open(self) -> None:
        """The load starts: throttling counts from here."""
        self.opened = self.accountant.counters(self.role)

    def close(self) -> None:
        """The load ended."""
        self.closed = self.accountant.counters(self.role)

    def reading(self, peak_mb: float | None, *, killed: bool) -> ServerCgroup | None:
        """The window's record; `killed`: a process of the server died by SIGKILL or vanished
        (what v1 before Linux 4.13 leaves to tell an OOM kill by)."""
        if self.started is None:
            return None
        ended = self.accountant.counters(self.role)
        if ended is None:
            return None
        opened, closed = self.opened or self.started, self.closed or ended
        return window_reading(opened, closed, peak_mb, oom_kills(self.started, ended, killed=killed))


def sigkilled(returncode: int | None) -> bool:
    return returncode == -signal.SIGKILL


def named_oom(status: TrialStatus, error: str | None, reading: ServerCgroup | None, label: str,
              spec: TrialSpec) -> tuple[TrialStatus, str | None]:
    """The window's status and error, as `server-oom` when the kernel killed a process of it."""
    if reading is None or not reading.oom_kills:
        return status, error
    limit = f" of {format_bytes(spec.memory_limit)}" if spec.memory_limit is not None else ""
    peak = f" (peak {reading.peak_memory_mb:.0f} MiB)" if reading.peak_memory_mb is not None else ""
    line = (f"the kernel killed {reading.oom_kills} process(es) of {label}'s server for going over its "
            f"memory limit{limit}{peak}")
    return TrialStatus.SERVER_OOM, f"{line}\n{error}" if error else line
