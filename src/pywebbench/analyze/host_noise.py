"""The host's noise as a run's first rounds show it, and what launches buy at that noise.

A plan line can say how many launches a budget buys, not how wide their intervals will be: that
depends on how much a window's ratio to the baseline moves on this machine today (a quiet host:
2-3%, a busy one: 10% and more). After its second round a run reads it from its own windows,
each stack's log ratios about their own mean, pooled over stacks, and says what its launches
resolve at that noise. The figure treats the windows as independent; a launch's own effect adds
to it (the intervals, made per launch, carry that), so it is a floor, said as "about".
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pywebbench.analyze.moderation import t_quantile
from pywebbench.analyze.pairing import paired_to_baseline
from pywebbench.plan.interval_rule import SPREADS_TO_POOL, launches_needed
from pywebbench.results.model import ServiceRecord, TrialResult

RECORD = "host-noise"
"""The service record a run writes with it (results.jsonl), beside the generator's ceiling."""


@dataclass(frozen=True)
class WindowNoise:
    sd: float
    """Standard deviation of one window's log ratio to the baseline, within a stack."""
    df: int
    windows: int
    stacks: int

    def resolves(self, launches: int, rounds_per_launch: int) -> float:
        """About how far (± relative) a ratio's 95% interval reaches at this many launches: on the
        stack's own launches, or on the table's pooled spread where it holds enough ratios."""
        df = max(1, launches - 1) * (self.stacks if self.stacks >= SPREADS_TO_POOL else 1)
        return math.expm1(t_quantile(df) * self.sd / math.sqrt(max(1, launches * rounds_per_launch)))

    def line(self, launches: int, rounds_per_launch: int) -> str:
        """`launches`: what the run plans, raised to what an interval needs in a table this size."""
        launches = max(launches, launches_needed(self.stacks))
        more = 2 * launches
        return (f"host noise: a window's ratio to the baseline spreads {math.expm1(self.sd):.1%} (sd, {self.windows} "
                f"windows of {self.stacks} stack(s)); at that noise {launches} launch(es) of {rounds_per_launch} "
                f"round(s) resolve about ±{self.resolves(launches, rounds_per_launch):.1%}, {more} about "
                f"±{self.resolves(more, rounds_per_launch):.1%}")


def window_noise(trials: Sequence[TrialResult], baseline: str) -> WindowNoise | None:
    """The pooled within-stack spread of the windows' log ratios; None before any stack has two."""
    groups: dict[tuple[str, object], list[TrialResult]] = defaultdict(list)
    for trial in trials:
        if trial.valid and trial.load is not None:
            groups[(trial.spec.label, trial.spec.cell)].append(trial)
    cells: dict[object, list[TrialResult]] = defaultdict(list)
    for (_label, cell), mine in groups.items():
        cells[cell] += mine
    squares, df, windows, stacks = 0.0, 0, 0, 0
    for (label, cell), mine in groups.items():
        base = groups.get((baseline, cell))
        if label == baseline or not base:
            continue
        logs = [math.log(o.value) for o in paired_to_baseline(mine, base, label, cells[cell]).ratios if o.value > 0]
        if len(logs) < 2:
            continue
        mean = sum(logs) / len(logs)
        squares += sum((x - mean) ** 2 for x in logs)
        df += len(logs) - 1
        windows += len(logs)
        stacks += 1
    return WindowNoise(math.sqrt(squares / df), df, windows, stacks) if df > 0 else None


NoiseReading = Callable[[Sequence[TrialResult], int, int], "tuple[str, ServiceRecord] | None"]
"""What the rounds call after a set's second round: (its windows, the launches it plans, rounds
per launch) -> the line to say and the record to keep, or None before two windows of a stack."""


def noise_reading(baseline: str) -> NoiseReading:
    """The reading a paired run's rounds make of the host's noise (measure/ sits below analyze/,
    so the run hands it to them, as it hands them its stopping rule)."""
    def read(trials: Sequence[TrialResult], planned: int, rounds_per_launch: int) -> tuple[str, ServiceRecord] | None:
        noise = window_noise(trials, baseline)
        if noise is None:
            return None
        launches = max(planned, launches_needed(noise.stacks))
        return noise.line(launches, rounds_per_launch), ServiceRecord(RECORD, "", {
            "sd_log": round(noise.sd, 6), "df": noise.df, "windows": noise.windows, "stacks": noise.stacks,
            "after_rounds": 2, "resolves": {str(n): round(noise.resolves(n, rounds_per_launch), 4)
                                            for n in (launches, 2 * launches)}})
    return read
