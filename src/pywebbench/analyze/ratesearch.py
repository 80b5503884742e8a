"""The capacity under a latency objective: the highest offered rate whose percentile holds.

Open loop (oha at a fixed rate, latency corrected for coordinated omission), so a rate past
capacity shows its queueing instead of slowing the clients down. The search brackets the
capacity by doubling or halving from a first rate, then bisects geometrically until the
bracket is within `resolution` (a fraction) or the probes run out. `measure(rate)` runs one
window at that rate and returns the latency at the objective's percentile (None: no answer).

Two things steer the probes without changing what a bracket means (only probes that held or
failed move its ends): a `ceiling` (a rate that failed before, in an earlier stage) caps the
doubling, and a probe that failed while completing fewer requests than it was offered (the
server saturated) says the capacity lies below what it completed, so the next probes go there
instead of to the geometric middle of a bracket that is still mostly empty.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from pywebbench.plan.slo import Slo

MIN_FRACTION = 1 / 64
"""Halving stops this far below the first rate: the app cannot hold the objective at all."""
SATURATED = 0.95
"""A failed probe that completed under this share of its offered rate ran the server flat out."""
PLAINLY_OVER = 0.75
"""... and under this share it is no spoiled window: it is not made again to confirm it."""
HINT_MARGIN = 1.05
"""The capacity is taken to lie below this much of what a saturated probe completed."""


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
                 max_probes: int = 12, confirm_failures: bool = False, ceiling: float | None = None) -> None:
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
        self.hint = ceiling if ceiling is not None and ceiling > start else None
        """Where the capacity is expected to end (a rate that failed before, or what a
        saturated probe completed): probes aim below it; a probe that holds past it drops it."""

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

    def record_held(self, latency_ms: float | None, held: bool, completed: float | None = None) -> None:
        """As `record`, with the verdict decided by the caller (a window that erred or fell short
        of its rate did not hold, whatever its latency); `completed`: the req/s the window served."""
        if self.stopped is not None:
            raise ValueError("the search has finished")
        rate = self._next
        self.probes.append(Probe(rate, latency_ms, held))
        if not held and completed is not None and completed < SATURATED * rate:  # ran flat out
            self.hint = min(self.hint or math.inf, completed * HINT_MARGIN)
        if held and self.hint is not None and rate >= self.hint:
            self.hint = None  # it held where it was expected to fail: the guess was wrong
        plainly_over = completed is not None and completed < PLAINLY_OVER * rate
        if (self.confirm_failures and not held and not self._retrying and not plainly_over
                and len(self.probes) < self.max_probes):
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
                    self._bracket_next(min(self._toward_hint(rate, rate * 2), self.max_rate))
                return
        else:
            # ... and halve while it does not
            self.high = rate
            if self.low is None:
                if rate <= self.start * MIN_FRACTION:
                    self.stopped = "floor"
                else:
                    # Halve, or go straight to what a saturated probe completed if that is lower.
                    self._bracket_next(min(rate / 2, self.hint) if self.hint is not None else rate / 2)
                return
        self._bisecting = True
        assert self.low is not None and self.high is not None
        if self.high / self.low - 1 <= self.resolution:
            self.stopped = "resolved"
        elif len(self.probes) >= self.max_probes:
            self.stopped = "probes"
        else:
            self._next = self._toward_hint(self.low, math.sqrt(self.low * self.high))  # bisect geometrically

    def _toward_hint(self, low: float, otherwise: float) -> float:
        """The next rate above `low`: `otherwise`, unless a hint says the capacity ends sooner,
        then the middle of [low, hint], or just past low when that span is within the resolution
        (a probe there that fails closes the bracket)."""
        if self.hint is None or self.hint >= otherwise:
            return otherwise
        if self.hint / low - 1 > self.resolution:
            return math.sqrt(low * self.hint)
        return low * (1 + self.resolution * 0.9)

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
