"""CPU time and memory of each process tree (app, services, load generator) during a trial.

`ResourceSampler` runs a thread that, every `interval_s`, finds each role's process tree and
reads the kernel's counters. CPU is not sampled but accumulated from those counters: per
process, the growth of user+system time since it was first seen (from the window's start for
processes already running, from zero for processes born in the window), plus the CPU of the
children it waited for (the kernel's children times), so a worker or helper that lives
between two ticks is still counted, once, when its parent reaps it. "other" is the rest of
the machine: busy CPU system-wide minus every role.

Linux only, like the rest of the harness: each process costs one read of /proc/<pid>/stat per
tick, which holds parent, start time, CPU times and RSS together. psutil needs two files
and a parse into a dict for the same numbers, 4-6x the CPU per process in a warm loop, and a
PostgreSQL role alone can hold a hundred backends. psutil still lists the processes, reads
the system-wide times and finds children in generator_roots() without a table (those reads
are measure/proctable.py's).
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import TracebackType

from pywebbench.core.errors import UserError
from pywebbench.measure.proctable import CLOCK_TICKS, ProcessTable, ProcStat, busy_seconds, read_stat
from pywebbench.results.model import ResourceUsage

# CPU comes from cumulative counters and reaped-children times, so the interval does not
# limit CPU accuracy (the tests hold to the clock tick with 5 s intervals). It bounds how
# short a memory peak can be and still be seen (10 samples in a 10 s window), the CPU a
# process takes along when it exits and no tracked parent waits for it (one interval), and
# the sampler's cost, which is per tick: ~0.25 ms of CPU for 20 processes with warm caches,
# but 10-25 ms on the 2-vCPU VM this was measured on, where a thread waking from a sleep
# finds its caches cold (a C loop pays ~1 ms for its first /proc read after a 0.25 s sleep,
# then ~10 us). There, 1 s costs 1.3-3% of a core and 0.25 s 5-8% (scripts/bench-sampler),
# so the harness ticks every 5 s (plus the first and last tick of each window): 0.9% of a
# core over a 10 s bench-sampler window here, and each trial records what its sampling cost.
DEFAULT_INTERVAL_S = 5.0
# The interval while the load generator is not found yet, in the window's first EAGER_FOR_S:
# it starts just after the sampler, and its memory and process count need a sighting.
EAGER_INTERVAL_S = 0.1
EAGER_FOR_S = 1.0
# Listing /proc is the dearest step of a tick (it walks every task on the machine), so new
# processes are looked for at most this often, and also at the first and last tick and at
# the eager ticks; never while the kernel hands out no new PID. One found late loses
# none of its CPU (counted from its birth) but can miss a memory peak in its first second.
DISCOVERY_INTERVAL_S = 1.0
OTHER = "other"
MIB = 1024 * 1024

# Start times are whole clock ticks, rounded down: a process born just after the window
# opened can look up to a tick older than it is.
_BIRTH_SLACK_TICKS = 2
@dataclass
class _Tracked:
    """One process of a role as last read. CPU figures are the process's lifetime counters."""

    role: str
    parent: int
    started: int
    own_s: float
    reaped_s: float
    pending_s: float = 0.0
    """Last-seen totals of its children that vanished, not yet matched by growth of reaped_s."""
    unmatched_s: float = 0.0
    """Growth of reaped_s not yet matched with a vanished child we had counted ourselves."""

    @property
    def total_s(self) -> float:
        return self.own_s + self.reaped_s


@dataclass
class _RoleTotals:
    cpu_s: float = 0.0
    peak_rss_bytes: int = 0
    processes: int = 0


class ResourceSampler:
    """`with ResourceSampler(roles) as s: <load>` -> s.usages, s.sampler_cpu_s.

    `roles()` is called at every tick, from the sampling thread (the load generator starts
    after the sampler, so its root appears late), and returns root PIDs per role; a role's
    tree is its roots and all their descendants. A process in two trees counts for the first
    role that names it. RSS is summed over a tree, so pages shared between prefork workers
    (the code, copy-on-write memory of the master) count once per worker: an upper bound.
    """

    def __init__(
        self,
        roles: Callable[[], Mapping[str, Iterable[int]]],
        interval_s: float = DEFAULT_INTERVAL_S,
        *,
        table: ProcessTable | None = None,
        generator_role: str | None = "loadgen",
    ) -> None:
        if not interval_s > 0:
            raise UserError(f"the resource sampling interval must be above 0 s, got {interval_s}")
        self.roles = roles
        self.interval_s = interval_s
        self.table = table if table is not None else ProcessTable()
        self.generator_role = generator_role
        """The load generator's role: a child of this process, started after the sampler. It is
        looked for every EAGER_INTERVAL_S until found, and gets the CPU of this process's
        children reaped in the window beyond what sightings counted. None: no such role."""
        self.usages: tuple[ResourceUsage, ...] = ()
        """Per role, in the order roles() first named them, then "other"; set on exit."""
        self.sampler_cpu_s = 0.0
        """CPU the sampling thread used, baseline and last sample included; set on exit."""
        self.ticks = 0
        self._totals: dict[str, _RoleTotals] = {}
        self._tracked: dict[int, _Tracked] = {}
        self._me = os.getpid()
        self._my_reaped_s = 0.0
        self._my_unmatched_s = 0.0
        self._my_pending_s = 0.0
        self._born_after = 0
        self._opened_at = self._closed_at = 0.0
        self._busy_at_open = self._busy_at_close = 0.0
        self._discovered_at = 0.0
        self._generator_unseen = generator_role is not None
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._error: Exception | None = None
        self._thread = threading.Thread(target=self._run, name="resource-sampler", daemon=True)

    def __enter__(self) -> ResourceSampler:
        self._thread.start()
        self._ready.wait()  # the baseline is taken before the measured work starts
        if self._error is not None:
            self._thread.join()
            raise self._error
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.usages = self._usages()
        if self._error is not None and exc_type is None:
            raise self._error

    def _run(self) -> None:
        started = time.thread_time()
        try:
            self._open()
            self._ready.set()
            while not self._stop.wait(self._next_wait_s()):
                self._tick()
            self._tick(discover=True, final=True)
            self._close()
        except Exception as exc:  # a bug or a failing roles(): raised by __enter__ / __exit__
            self._error = exc
        finally:
            self.sampler_cpu_s = time.thread_time() - started
            self._ready.set()

    def _open(self) -> None:
        self._born_after = int(time.clock_gettime(time.CLOCK_BOOTTIME) * CLOCK_TICKS) - _BIRTH_SLACK_TICKS
        self._my_reaped_s = self._read_my_reaped(self._my_reaped_s)
        self._tick(baseline=True, discover=True)
        self._busy_at_open = busy_seconds()
        self._opened_at = time.monotonic()

    def _close(self) -> None:
        self._busy_at_close = busy_seconds()
        self._closed_at = time.monotonic()

    def _eager(self) -> bool:
        return self._generator_unseen and time.monotonic() - self._opened_at < EAGER_FOR_S

    def _next_wait_s(self) -> float:
        return min(self.interval_s, EAGER_INTERVAL_S) if self._eager() else self.interval_s

    def _tick(self, *, baseline: bool = False, discover: bool = False, final: bool = False) -> None:
        self.ticks += 1
        if discover or self._eager() or time.monotonic() - self._discovered_at >= DISCOVERY_INTERVAL_S:
            self.table.refresh()
            self._discovered_at = time.monotonic()
        members: set[int] = set()
        for role, roots in self.roles().items():
            totals = self._totals.setdefault(role, _RoleTotals())
            rss = count = 0
            for pid in self.table.tree(roots):
                if pid in members:
                    continue
                found = self._read(pid, role, totals, baseline)
                if found is not None:
                    members.add(pid)
                    rss += found
                    count += 1
            totals.peak_rss_bytes = max(totals.peak_rss_bytes, rss)
            totals.processes = max(totals.processes, count)
            if role == self.generator_role and count:
                self._generator_unseen = False
        self._settle_vanished(members)
        self._credit_my_reaped(final)

    def _read(self, pid: int, role: str, totals: _RoleTotals, baseline: bool) -> int | None:
        """Add the process's CPU growth to its role; its RSS in bytes, None if it is gone."""
        stat = read_stat(pid)
        if stat is None:
            self.table.discard(pid)
            return None
        tracked = self._tracked.get(pid)
        if tracked is None or tracked.started != stat.started:  # new, or its PID was reused
            tracked = self._first_sight(stat, role, baseline)
            self._tracked[pid] = tracked
        totals.cpu_s += (stat.own_s - tracked.own_s) + (stat.reaped_s - tracked.reaped_s)
        tracked.unmatched_s += stat.reaped_s - tracked.reaped_s
        tracked.own_s, tracked.reaped_s, tracked.role = stat.own_s, stat.reaped_s, role
        return stat.rss_bytes

    def _first_sight(self, stat: ProcStat, role: str, baseline: bool) -> _Tracked:
        if not baseline and stat.started >= self._born_after:
            return _Tracked(role, stat.parent, stat.started, 0.0, 0.0)  # born in the window: all of it
        return _Tracked(role, stat.parent, stat.started, stat.own_s, stat.reaped_s)  # from now on

    def _settle_vanished(self, members: set[int]) -> None:
        """Stop tracking processes that left; count each exited one once.

        A process that exits takes the CPU it used since its last reading with it, unless its
        parent waits for it: then the parent's reaped_s grows by the child's whole lifetime
        total, part of which we had already counted. So its last-seen total is handed to the
        parent as pending, and that much of the parent's reaped growth is not counted again.
        A process no tracked parent waits for (reparented, or SIGCHLD ignored) loses at most
        one interval of CPU.
        """
        gone = {pid: t for pid, t in self._tracked.items()
                if pid not in members and not self.table.alive(pid)}
        live = {pid: t for pid, t in self._tracked.items() if pid in members}
        for pid, tracked in _children_first(gone):
            carried = tracked.total_s + tracked.pending_s
            heir = gone.get(tracked.parent) or live.get(tracked.parent)
            if heir is not None:
                heir.pending_s += carried
            elif tracked.parent == self._me:  # a root this process started: the load generator
                self._my_pending_s += carried
        for tracked in live.values():
            matched = min(tracked.pending_s, tracked.unmatched_s)
            self._totals[tracked.role].cpu_s -= matched
            tracked.pending_s -= matched
            tracked.unmatched_s -= matched
        self._tracked = live  # alive but out of every tree (reparented away): dropped

    def _credit_my_reaped(self, final: bool) -> None:
        """CPU of this process's own children reaped in the window, to `generator_role`.

        This process is in no role, but the load generator is its child: it can exit between
        two ticks, even before its first one, and is then reaped here. What our reaped time
        grew by, less the last-seen totals of the vanished children we counted ourselves, is
        the generator's CPU we did not see; it is credited at the last tick, so a reap seen a
        tick before the child's disappearance still finds its match. The runner starts no
        other child during a window (one that did would be counted here too).
        """
        reaped_s = self._read_my_reaped(self._my_reaped_s)
        self._my_unmatched_s += reaped_s - self._my_reaped_s
        self._my_reaped_s = reaped_s
        matched = min(self._my_pending_s, self._my_unmatched_s)
        self._my_pending_s -= matched
        self._my_unmatched_s -= matched
        totals = self._totals.get(self.generator_role) if self.generator_role is not None else None
        if final and totals is not None:
            totals.cpu_s += self._my_unmatched_s
            self._my_unmatched_s = 0.0

    def _read_my_reaped(self, fallback: float) -> float:
        stat = read_stat(self._me)
        return fallback if stat is None else stat.reaped_s

    def _usages(self) -> tuple[ResourceUsage, ...]:
        window_s = max(0.0, self._closed_at - self._opened_at)
        roles = tuple(
            ResourceUsage(role, max(0.0, t.cpu_s), t.peak_rss_bytes / MIB, t.processes, window_s)
            for role, t in self._totals.items()
        )
        # Also holds this process (the harness and this thread) and kernel time charged to no
        # process (interrupts, softirq: loopback networking), so it bounds what neighbours used.
        other_s = max(0.0, self._busy_at_close - self._busy_at_open - sum(r.cpu_s for r in roles))
        return (*roles, ResourceUsage(OTHER, other_s, 0.0, 0, window_s))


def _children_first(gone: Mapping[int, _Tracked]) -> list[tuple[int, _Tracked]]:
    """Vanished processes, each before its vanished parent, so pending flows upward."""

    def depth(item: tuple[int, _Tracked]) -> int:
        levels, parent, seen = 0, item[1].parent, set[int]()
        while parent in gone and parent not in seen:
            seen.add(parent)
            levels += 1
            parent = gone[parent].parent
        return levels

    return sorted(gone.items(), key=depth, reverse=True)
