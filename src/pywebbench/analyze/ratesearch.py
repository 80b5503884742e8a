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
    """resolved, max-rate, floor, or probes: why the search ended."""

    @property
    def bracket(self) -> float | None:
        """failed_at / rate - 1: how far the true capacity may lie above `rate`."""
        if self.rate is None or self.failed_at is None:
            return None
        return self.failed_at / self.rate - 1


def search_capacity(measure: Callable[[float], float | None], slo: Slo, *, start: float, max_rate: float,
                    resolution: float = 0.05, max_probes: int = 12) -> Capacity:
    if not (start > 0 and max_rate >= start and resolution > 0 and max_probes >= 1):
        raise ValueError("need 0 < start <= max_rate, resolution > 0 and at least one probe")
    probes: list[Probe] = []

    def probe(rate: float) -> bool:
        latency = measure(rate)
        held = slo.met(latency)
        probes.append(Probe(rate, latency, held))
        return held

    low: float | None = None
    high: float | None = None
    rate = start
    # bracket: double while it holds, halve while it does not
    while len(probes) < max_probes:
        if probe(rate):
            low = rate
            if high is not None:
                break
            if rate >= max_rate:
                return Capacity(low, None, tuple(probes), "max-rate")
            rate = min(rate * 2, max_rate)
        else:
            high = rate
            if low is not None:
                break
            if rate <= start * MIN_FRACTION:
                return Capacity(None, high, tuple(probes), "floor")
            rate = rate / 2
    # bisect the bracket geometrically
    while low is not None and high is not None and high / low - 1 > resolution and len(probes) < max_probes:
        mid = math.sqrt(low * high)
        if probe(mid):
            low = mid
        else:
            high = mid
    if low is not None and high is not None and high / low - 1 <= resolution:
        return Capacity(low, high, tuple(probes), "resolved")
    return Capacity(low, high, tuple(probes), "probes")
