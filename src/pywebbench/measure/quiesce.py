"""Wait after a launch until the servers it started are idle, before the first window.

A launch starts every server of a comparison set at once. Gunicorn and uWSGI bind their
port before their workers have imported the app, so a server answers (and passes its
verification and warmup) while the rest of its workers, and those of every other server
started beside it, are still booting. With seed 003's 26 stacks (78 workers and more) on 2
cores, that boot storm lasted the first two minutes of the first round: windows in it got
0-56 req/s where the second round got thousands. So after the warmups the rounds wait until
the launched servers together use less than a small share of one CPU over a short sample,
or until a timeout, which is said in a note (the windows are still taken: the checks and
the intervals then show what the storm did).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from pywebbench.measure.launchers import RunningServer, process_tree
from pywebbench.measure.proctable import read_stat

IDLE_CPU_BASE = 0.05
"""Share of one CPU the launched servers may use together and count as idle..."""
IDLE_CPU_PER_SERVER = 0.005
"""...plus this much per server (idle workers still wake for heartbeats and timers)."""
SAMPLE_S = 0.25
TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Quiet:
    waited_s: float
    settled: bool
    """False: the timeout came first."""
    last_share: float
    """The servers' CPU over the last sample, in CPUs."""


def idle_share(servers: int) -> float:
    return IDLE_CPU_BASE + IDLE_CPU_PER_SERVER * servers


def wait_until_idle(cpu_seconds: Callable[[], float], servers: int, *, sample_s: float | None = None,
                    timeout_s: float = TIMEOUT_S, clock: Callable[[], float] = time.monotonic,
                    sleep: Callable[[float], None] = time.sleep) -> Quiet:
    """Sample `cpu_seconds` (the servers' CPU so far) until a sample's share is idle, or the timeout
    (each sample `sample_s` long, SAMPLE_S as the module holds it when called)."""
    sample_s = SAMPLE_S if sample_s is None else sample_s
    start = clock()
    threshold = idle_share(servers)
    share = float("inf")
    before, at = cpu_seconds(), clock()
    while True:
        sleep(sample_s)
        after, then = cpu_seconds(), clock()
        share = max(0.0, after - before) / max(then - at, 1e-6)
        if share <= threshold:
            return Quiet(then - start, True, share)
        if then - start >= timeout_s:
            return Quiet(then - start, False, share)
        before, at = after, then


@dataclass(frozen=True)
class Drained:
    waited_s: float
    drained: bool
    """False: the timeout came first (a connection the server never closes, or a long backlog)."""
    left: int


def wait_until_drained(pending: Callable[[], int], *, timeout_s: float, poll_s: float = 0.05,
                       stall_s: float | None = None, clock: Callable[[], float] = time.monotonic,
                       sleep: Callable[[float], None] = time.sleep) -> Drained:
    """Poll `pending` (connections queued or held by the servers, measure/backlog.py) until none,
    the timeout, or (with `stall_s`) that long without the count going down: a queue being served
    shrinks every request, so one that stops shrinking is held, not queued (bjoern's CLOSE_WAIT)."""
    start = clock()
    lowest, lowered_at = -1, start
    while True:
        left = pending()
        now = clock()
        waited = now - start
        if left == 0:
            return Drained(waited, True, 0)
        if lowest < 0 or left < lowest:
            lowest, lowered_at = left, now
        if waited >= timeout_s or (stall_s is not None and now - lowered_at >= stall_s):
            return Drained(waited, False, left)
        sleep(poll_s)


class ServersCpu:
    """The CPU seconds so far of a set of servers: local ones by their process trees in /proc
    (a process first seen counts whole: it started during the sample), remote ones by their
    process group on their host."""

    def __init__(self, servers: Iterable[RunningServer]) -> None:
        self.servers = tuple(servers)
        self._seen: dict[tuple[int, int], float] = {}
        self._total = 0.0

    def __call__(self) -> float:
        reads = [s.group_usage for s in self.servers if s.group_usage is not None]
        remote = 0.0
        if reads:
            # An SSH round trip each (about 50 ms on the netns rig): read at once, not one after
            # another, so a launch's remote servers cost one trip per sample (at most 8 channels
            # at once: sshd's MaxSessions is 10 by default).
            with ThreadPoolExecutor(max_workers=min(8, len(reads))) as pool:
                remote = sum(u.cpu_s for u in pool.map(lambda read: read(), reads) if u is not None)
        for server in self.servers:
            if server.group_usage is not None:
                continue
            for pid in process_tree(server.pids):
                stat = read_stat(pid)
                if stat is None:
                    continue
                key = (pid, stat.started)
                self._total += stat.own_s - self._seen.get(key, 0.0)
                self._seen[key] = stat.own_s
        return self._total + remote
