"""A CI gate's answer from one run where the base and the head of an app were live together.

`app --baseline-dir/--baseline-ref` runs both versions under each server, interleaved (or in
duet) in the same rounds, as `<stack>#base` and `<stack>#head`. The answer is head/base per
server and figure (req/s, p99, CPU per request) with its 95% interval, judged against a
threshold: a regression when the whole interval lies past it on the worse side, equivalent
when it lies within +-threshold, an improvement when past it on the better side, else
unresolved, with the rounds a run would need to resolve it (width ~ 1/sqrt(rounds)).
Two separate runs would read a change of the machine's speed between them as a change of
the app; in one run it cancels in every paired round.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from pywebbench.analyze.duet import with_duet_term
from pywebbench.analyze.pairing import cpu_per_request, figure_ratios, p99_of, rps_of
from pywebbench.analyze.paired import Interval, Observation, launches_of, rounds_needed, table_intervals
from pywebbench.analyze.rows import latest_trials
from pywebbench.plan.interval_rule import why_none
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import TrialResult

BASE, HEAD = "base", "head"
"""The aliases of the two versions: a stack's rows read `app:gunicorn-sync#base` and `#head`."""
AT_THE_THRESHOLD = 1e-4
"""A centre this close (in log) to a decision boundary: no run length decides which side it is on."""


class GateFigure(Enum):
    RPS = "req/s"
    P99 = "p99"
    CPU = "CPU/req"

    @property
    def higher_is_better(self) -> bool:
        return self is GateFigure.RPS


class GateVerdict(Enum):
    REGRESSION = "regression"
    EQUIVALENT = "equivalent"
    IMPROVEMENT = "improvement"
    UNRESOLVED = "unresolved"
    NO_INTERVAL = "no interval"


@dataclass(frozen=True)
class GateRow:
    stack: str
    """The stack id both versions ran under (`app:gunicorn-sync`)."""
    figure: GateFigure
    interval: Interval | None
    verdict: GateVerdict
    rounds_needed: int | None = None
    """For an unresolved row: rounds that would resolve it at this noise (None: it sits at the threshold)."""
    why_none: str | None = None

    @property
    def line(self) -> str:
        head = f"{self.stack} {self.figure.value}: head/base "
        if self.interval is None:
            return head + f"has no interval ({self.why_none or 'no paired rounds'})"
        iv = self.interval
        text = head + f"{iv.center:.4f} [{iv.low:.4f}, {iv.high:.4f}] over {iv.n_rounds} rounds in " \
                      f"{iv.n_launches} launches: {self.verdict.value}"
        if self.verdict is GateVerdict.UNRESOLVED:
            text += (f"; about {self.rounds_needed} rounds would resolve it" if self.rounds_needed is not None
                     else "; it sits at the threshold, which no run length resolves")
        return text


@dataclass(frozen=True)
class Gate:
    threshold: float
    rows: tuple[GateRow, ...]

    @property
    def regressions(self) -> tuple[GateRow, ...]:
        return tuple(r for r in self.rows if r.verdict is GateVerdict.REGRESSION)

    @property
    def failed(self) -> bool:
        return bool(self.regressions)


def judge(interval: Interval, threshold: float, higher_is_better: bool) -> GateVerdict:
    """The interval of head/base against +-threshold (a fraction), the worse side per figure."""
    low, high = 1.0 - threshold, 1.0 + threshold
    if interval.low >= low and interval.high <= high:
        return GateVerdict.EQUIVALENT
    worse_below = higher_is_better
    if (interval.high < low) if worse_below else (interval.low > high):
        return GateVerdict.REGRESSION
    if (interval.low > high) if worse_below else (interval.high < low):
        return GateVerdict.IMPROVEMENT
    return GateVerdict.UNRESOLVED


def rounds_to_resolve(interval: Interval, threshold: float) -> int | None:
    """Rounds whose interval would be narrow enough to fall on one side of each boundary."""
    centre = math.log(interval.center)
    gap = min(abs(centre - math.log(1.0 - threshold)), abs(centre - math.log(1.0 + threshold)))
    if gap < AT_THE_THRESHOLD:
        return None
    return rounds_needed(interval, math.exp(gap) - 1.0)


FIGURES: dict[GateFigure, Callable[[TrialResult], float | None]] = {
    GateFigure.RPS: rps_of, GateFigure.P99: p99_of, GateFigure.CPU: cpu_per_request}


def versions_of(trials: Sequence[TrialResult]) -> dict[str, tuple[list[TrialResult], list[TrialResult]]]:
    """Each stack id that ran both versions: (head's windows, base's windows), last record of each."""
    found: dict[str, tuple[list[TrialResult], list[TrialResult]]] = {}
    for t in latest_trials(tuple(trials)):
        if t.spec.alias in (BASE, HEAD):
            head, base = found.setdefault(t.spec.stack_id, ([], []))
            (head if t.spec.alias == HEAD else base).append(t)
    return {stack: pair for stack, pair in found.items() if pair[0] and pair[1]}


def head_over_base(trials: Sequence[TrialResult], threshold: float) -> Gate:
    """Every stack's head/base per figure, moderated across the stacks of the run, and judged."""
    if not 0.0 < threshold < 1.0:
        raise ValueError("the threshold is a fraction between 0 and 1")
    versions = versions_of(trials)
    everything = [t for pair in versions.values() for side in pair for t in side]
    rows: list[GateRow] = []
    for figure, value in FIGURES.items():
        ratios: dict[str, tuple[Observation, ...]] = {
            stack: figure_ratios(head, base, f"{stack}#{HEAD}", value, everything)
            for stack, (head, base) in versions.items()}
        intervals, prior = table_intervals(ratios)
        for stack, (head, _base) in versions.items():
            interval = intervals.get(stack)
            if interval is not None and any(strategy_of(t.spec.method).side_by_side for t in head):
                interval = with_duet_term(interval)
            rows.append(_row(stack, figure, interval, ratios[stack], threshold, prior.df > 0))
    return Gate(threshold, tuple(sorted(rows, key=lambda r: (r.stack, list(GateFigure).index(r.figure)))))


def _row(stack: str, figure: GateFigure, interval: Interval | None, ratios: Sequence[Observation],
         threshold: float, lent: bool) -> GateRow:
    if interval is None:
        return GateRow(stack, figure, None, GateVerdict.NO_INTERVAL, why_none=why_none(launches_of(ratios), lent))
    verdict = judge(interval, threshold, figure.higher_is_better)
    needed = rounds_to_resolve(interval, threshold) if verdict is GateVerdict.UNRESOLVED else None
    return GateRow(stack, figure, interval, verdict, needed)
