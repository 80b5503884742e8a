"""The capacity under a latency objective: the highest offered rate whose percentile holds.

Open loop (oha at a fixed rate, latency corrected for coordinated omission), so a rate past
capacity shows its queueing instead of slowing the clients down. The search brackets the
capacity by doubling or halving from a first rate, then bisects geometrically until the
bracket is within `resolution` (a fraction) or the probes run out. `measure(rate)` runs one
window at that rate and returns the latency at the objective's percentile (None: no answer).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pywebbench.plan.slo import Slo

MIN_FRACTION = 1 / 64
"""Halving stops this far below the first rate: the app cannot hold the objective at all."""


@dataclass(frozen=True)
class Probe:
    rate: float
    latency_ms: float | None
    met: bool


@dataclass(frozen=True)
class Capacity:
    rate: float | None
    """The highest probed rate that held the objective (None: none did)."""
    failed_at: float | None
    """The lowest probed rate that did not (None: every probe held, up to max_rate)."""
    probes: tuple[Probe, ...]
    stopped: str
    """resolved, max-rate, floor, or probes: why the search ended (or what cut it short:
    budget, server-failed; running while it goes on)."""

    @property
    def bracket(self) -> float | None:
        """failed_at / rate - 1: how far the true capacity may lie above `rate`."""
        if self.rate is None or self.failed_at is None:
            return None
        return self.failed_at / self.rate - 1


class CapacitySearch:
    """The search one probe at a time, so several can advance together (one probe per candidate
    per interleaved round): `next_rate` is the rate to probe (None: finished), `record` takes
    what that probe measured, `cut` ends it early (the budget), `result` is the capacity so far."""

    def __init__(self, slo: Slo, *, start: float, max_rate: float, resolution: float = 0.05,
                 max_probes: int = 12, confirm_failures: bool = False) -> None:
        if not (start > 0 and max_rate >= start and resolution > 0 and max_probes >= 1):
            raise ValueError("need 0 < start <= max_rate, resolution > 0 and at least one probe")
        self.slo = slo
        self.start = start
        self.max_rate = max_rate
        self.resolution = resolution
        self.max_probes = max_probes
        self.probes: list[Probe] = []
        self.low: float | None = None
        self.high: float | None = None
        self._next: float = start
        self._bisecting = False
        self.stopped: str | None = None
        self.confirm_failures = confirm_failures
        """A failed probe is made again at the same rate, and the second decides: one window
        spoiled by a neighbour's burst would otherwise end a search far below the capacity."""
        self._retrying = False

    @property
    def next_rate(self) -> float | None:
        return None if self.stopped is not None else self._next

    def cut(self, why: str) -> None:
        """End the search where it is (no more probes): `why` becomes its stop reason."""
        if self.stopped is None:
            self.stopped = why

    def record(self, latency_ms: float | None) -> None:
        """The latency the probe at `next_rate` measured (None: no answer, the objective not held)."""
        if self.stopped is not None:
            raise ValueError("the search has finished")
        self.record_held(latency_ms, self.slo.met(latency_ms))

    def record_held(self, latency_ms: float | None, held: bool) -> None:
        """As `record`, with the verdict decided by the caller (a window that erred or fell short
        of its rate did not hold, whatever its latency)."""
        if self.stopped is not None:
            raise ValueError("the search has finished")
        rate = self._next
        self.probes.append(Probe(rate, latency_ms, held))
        if self.confirm_failures and not held and not self._retrying and len(self.probes) < self.max_probes:
            self._retrying = True  # same rate again; the next probe's verdict is the one used
            return
        self._retrying = False
        if self._bisecting:
            if held:
                self.low = rate
            else:
                self.high = rate
        elif held:
            # bracket: double while it holds ...
            self.low = rate
            if self.high is None:
                if rate >= self.max_rate:
                    self.stopped = "max-rate"
                else:
                    self._bracket_next(min(rate * 2, self.max_rate))
                return
        else:
            # ... and halve while it does not
            self.high = rate
            if self.low is None:
                if rate <= self.start * MIN_FRACTION:
                    self.stopped = "floor"
                else:
                    self._bracket_next(rate / 2)
                return
        self._bisecting = True
        assert self.low is not None and self.high is not None
        if self.high / self.low - 1 <= self.resolution:
            self.stopped = "resolved"
        elif len(self.probes) >= self.max_probes:
            self.stopped = "probes"
        else:
            self._next = math.sqrt(self.low * self.high)  # bisect the bracket geometrically

    def _bracket_next(self, rate: float) -> None:
        if len(self.probes) >= self.max_probes:
            self.stopped = "probes"
        else:
            self._next = rate

    def result(self) -> Capacity:
        return Capacity(self.low, self.high, tuple(self.probes), self.stopped or "running")


def search_capacity(measure: Callable[[float], float | None], slo: Slo, *, start: float, max_rate: float,
                    resolution: float = 0.05, max_probes: int = 12) -> Capacity:
    search = CapacitySearch(slo, start=start, max_rate=max_rate, resolution=resolution, max_probes=max_probes)
    while (rate := search.next_rate) is not None:
        search.record(measure(rate))
    return search.result()
