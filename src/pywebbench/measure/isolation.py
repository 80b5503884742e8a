"""Each window isolated from what earlier windows left behind on the run's live servers.

A stack loaded by many connections keeps working after its window: requests queued in its
accept backlog drain one by one, on the CPU (a `cpu` window's queue) or waiting on a service (a
sync worker behind the slow upstream). In seed 003 the windows after a `cpu` window found the
other servers using 2.9 s of CPU per 10 s window, and the same server's `db` window after its
`upstream` window completed nothing. So before every window the rounds wait, bounded, until no
connection is queued at or held by a live server (measure/backlog.py) and the servers' CPU is
idle (measure/quiesce.py), the wait in the time ledger as *quiet before windows*; each window
records the other servers' CPU (idle-apps), and one over the busy-neighbours share is measured
again once, then left out of the ratios if still flagged (analyze/pairing.counted).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from pywebbench.measure.backlog import pending, pending_by_port
from pywebbench.measure.checks import neighbours_busy
from pywebbench.measure.quiesce import ServersCpu, wait_until_drained, wait_until_idle
from pywebbench.measure.window import Live, TimeLedger, local_ports
from pywebbench.results.model import TrialResult

WINDOW_QUIET_TIMEOUT_S = 15.0
"""The longest wait before one window for the run's servers to drain what earlier windows queued."""
WINDOW_DRAIN_STALL_S = 3.0
"""A queue that has not shrunk for this long is held, not served (bjoern leaves its clients'
closed connections in CLOSE_WAIT): the wait ends there instead of at the 15 s limit."""


class Isolation:
    def __init__(self, ledger: TimeLedger, on_note: Callable[[str], None], holding: set[str]) -> None:
        self.ledger = ledger
        self.on_note = on_note
        self.remeasured = 0
        self.still_busy = 0
        self._cpu: ServersCpu | None = None
        self._ports: tuple[int, ...] = ()
        self._label_of: dict[int, str] = {}
        self._servers = 0
        self._slow_said = False
        self._holding = holding
        """Stacks seen holding connections they never serve, shared with the runner's settle drain:
        their queues are not waited for again in the run (bjoern's cost a 3 s stall per launch)."""

    def launched(self, lives: Mapping[str, Live], *, wait: bool) -> None:
        """A new launch's servers; with `wait`, its boot storm waited out before the first window."""
        self._cpu = ServersCpu(live.server for live in lives.values()) if lives else None
        self._servers = len(lives)
        self._label_of = {p: live.session.label for live in lives.values() for p in local_ports((live,))}
        self._ports = tuple(p for p, label in self._label_of.items() if label not in self._holding)
        if self._cpu is None or not wait:
            return
        quiet = wait_until_idle(self._cpu, self._servers)
        self.ledger.add("quiet after launch", quiet.waited_s)
        if not quiet.settled:
            self.on_note(f"the {self._servers} launched servers still used {quiet.last_share:.2f} CPUs after "
                         f"{quiet.waited_s:.0f} s; measuring anyway (the first round may show their boot)")

    def before_window(self) -> None:
        """Wait until every live server, the next one included, has drained what earlier windows
        queued (closing the generator's connections does not empty a server's accept queue)."""
        if self._cpu is None:
            return
        drained = wait_until_drained(lambda: pending(self._ports), timeout_s=WINDOW_QUIET_TIMEOUT_S,
                                     stall_s=WINDOW_DRAIN_STALL_S)
        if not drained.drained:
            # A server that never closes some connections would cost the wait at every window: its
            # queue is not waited for again in this run (the CPU wait and the busy-neighbours
            # check still hold for it).
            stuck = pending_by_port(self._ports)
            self._ports = tuple(p for p in self._ports if p not in stuck)
            names = sorted({self._label_of[p] for p in stuck})
            self._holding.update(names)
            self.on_note(f"{', '.join(names) or 'a live server'} still held {sum(stuck.values())} connection(s) "
                         f"after {drained.waited_s:.0f} s; not waiting for its queue again in this run")
        quiet = wait_until_idle(self._cpu, self._servers, timeout_s=WINDOW_QUIET_TIMEOUT_S)
        self.ledger.add("quiet before windows", drained.waited_s + quiet.waited_s)
        if not quiet.settled and not self._slow_said:
            self._slow_said = True
            self.on_note(f"the {self._servers} live servers still used {quiet.last_share:.2f} CPUs after "
                         f"{quiet.waited_s:.0f} s before a window; measuring anyway (busy-neighbours flags it)")

    def measured(self, result: TrialResult, again: Callable[[], TrialResult]) -> None:
        """A window the other servers' backlog shaped is measured once more after they are idle;
        the later record replaces it (the same trial id)."""
        if not neighbours_busy(result):
            return
        self.remeasured += 1
        self.before_window()
        self.still_busy += neighbours_busy(again())

    def summary(self) -> str | None:
        if not self.remeasured:
            return None
        return (f"{self.remeasured} window(s) measured again: the run's other servers were still busy (a backlog "
                f"draining); {self.still_busy} still flagged busy-neighbours, left out of the ratios")
