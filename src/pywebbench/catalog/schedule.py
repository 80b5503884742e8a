"""Recorded traffic as a schedule: when each request of a log arrived and which kind it was.

`app --from-log FILE --replay` sends the log's own arrival times (loadgen/replay.py) instead of
a constant rate, so its bursts reach the server. A window's offered rate scales the whole
recording: at rate R the log plays at R / (its mean rate) times its own speed, which is what
`--replay-speed` sets and what the SLO search moves. A window plays the stretch of the
recording that starts where the previous round's ended (every stack of a round plays the same
stretch, so their windows stay paired), wrapping round to the start at the end of the log.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, eq=False)
class Schedule:
    """Arrivals at the log's own speed: offsets in seconds from the first request, ascending,
    and the index of each one's kind in the workload's mix."""

    offsets_s: tuple[float, ...]
    kinds: tuple[int, ...]
    source: str = ""
    """Where the arrivals came from (the log's path), for the results header."""

    def __post_init__(self) -> None:
        if len(self.offsets_s) != len(self.kinds):
            raise ValueError(f"{len(self.offsets_s)} offsets for {len(self.kinds)} kinds")
        if len(self.offsets_s) < 2:
            raise ValueError("a schedule needs at least two arrivals")
        if any(b < a for a, b in zip(self.offsets_s, self.offsets_s[1:])):
            raise ValueError("a schedule's offsets must not decrease")

    @property
    def span_s(self) -> float:
        """The recording's length: its last arrival plus one mean gap, so a wrapped replay keeps
        the mean rate across the seam."""
        count = len(self.offsets_s)
        last = self.offsets_s[-1] - self.offsets_s[0]
        return last * count / (count - 1) if last > 0 else float(count)

    @property
    def mean_rate(self) -> float:
        """Requests per second at the log's own speed."""
        return len(self.offsets_s) / self.span_s

    def speed_for(self, rate: float) -> float:
        """The multiple of the log's speed that offers `rate` req/s on average."""
        return rate / self.mean_rate

    def start_for_round(self, round_index: int, duration_s: float, rate: float) -> float:
        """Where in the recording (seconds at its own speed) round `round_index`'s windows begin."""
        return (max(0, round_index - 1) * duration_s * self.speed_for(rate)) % self.span_s

    def stretch(self, start_s: float, duration_s: float, rate: float) -> list[tuple[float, int]]:
        """The arrivals of one window: (seconds after the window's start, kind), for `duration_s`
        of wall time at `rate` req/s on average, from `start_s` into the recording, wrapping."""
        speed = self.speed_for(rate)
        wanted = duration_s * speed  # seconds of the recording this window plays
        first = self.offsets_s[0]
        span = self.span_s
        out: list[tuple[float, int]] = []
        played = 0.0
        position = start_s % span
        while played < wanted:
            index = bisect.bisect_left(self.offsets_s, first + position)
            take = min(wanted - played, span - position)
            end = bisect.bisect_left(self.offsets_s, first + position + take)
            out.extend(((played + self.offsets_s[i] - first - position) / speed, self.kinds[i])
                       for i in range(index, end))
            played += take
            position = 0.0
        return out


def per_second(offsets_s: Sequence[float], duration_s: float, late_in_last: bool = False) -> list[int]:
    """How many of `offsets_s` (seconds from a start) fall in each whole second of `duration_s`.

    `late_in_last`: an offset past the end counts in the last second, for what a window did
    (sent, answered) rather than what it planned: a request due at 1.999 s of a 2 s window and
    sent 3 ms late was sent by that window, and its second's count is where the lateness shows."""
    counts = [0] * max(1, int(duration_s + 0.999999))
    for offset in offsets_s:
        second = math.floor(offset)
        if late_in_last and second >= len(counts):
            second = len(counts) - 1
        if 0 <= second < len(counts):
            counts[second] += 1
    return counts
