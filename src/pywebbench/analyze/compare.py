"""Two result sets side by side: what changed per stack x workload, and whether it is noise.

A change counts as significant when the bootstrap 95% interval of after/before req/s
excludes 1; with a single repeat on either side there is no interval, and the change is
shown but not judged. The CI gate (`regressions`) reads three figures the same way, each
over the row's valid windows: req/s down, p99 up, CPU per request up; and for two tuning runs
under a latency objective, each candidate's capacity down (its search brackets apart).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from collections.abc import Callable

from pywebbench.plan.knobs import knob_labels
from pywebbench.analyze.pairing import cpu_per_request, p99_of
from pywebbench.analyze.rows import Row, latest_trials, summarize
from pywebbench.results.model import Cell, ResultSet, TrialResult
from pywebbench.analyze.stats import ratio_centre, ratio_ci
from pywebbench.analyze.tuning import tuning_of


@dataclass(frozen=True)
class Change:
    stack: str
    workload: str
    knobs: str
    rps_before: float | None
    rps_after: float | None
    rps_change: float | None
    """after / before - 1."""
    ratio_ci: tuple[float, float] | None
    p50_before: float | None
    p50_after: float | None
    p99_before: float | None
    p99_after: float | None
    cpu_before: float | None
    cpu_after: float | None
    """CPU ms per request."""
    verdict: str
    """faster, slower, within noise, or no interval."""
    p99_ci: tuple[float, float] | None = None
    """95% interval of after/before p99 (the median over windows); None under two windows a side."""
    cpu_ci: tuple[float, float] | None = None
    """The same for CPU per request."""


@dataclass(frozen=True)
class CapacityChange:
    """One tuning candidate's capacity under the objective, before and after.

    A capacity is a search's bracket: the highest offered rate that held the objective and the
    lowest that did not. The after/before ratio can lie anywhere between the brackets' ends."""

    stack: str
    """The candidate (class and its workers x threads)."""
    workload: str
    knobs: str
    """The objective it was searched under."""
    before: tuple[float | None, float | None]
    """(rate that held, rate that failed): None where the search found no such rate."""
    after: tuple[float | None, float | None]

    @property
    def change(self) -> float | None:
        """after / before - 1 of the rates that held (a lost capacity counts as zero)."""
        held_before, held_after = self.before[0], self.after[0]
        return (held_after or 0.0) / held_before - 1 if held_before else None

    @property
    def interval(self) -> tuple[float, float] | None:
        """The range of after/before the two brackets allow (inf: the after search's top held)."""
        held_before, failed_before = self.before
        held_after, failed_after = self.after
        if not held_before:
            return None
        low = (held_after or 0.0) / failed_before if failed_before else 0.0
        high = failed_after / held_before if failed_after else float("inf")
        return (low, high)


@dataclass(frozen=True)
class Regression:
    """One figure of one row that got significantly worse by more than the gate's threshold."""

    change: Change | CapacityChange
    figure: str
    """req/s, p99 or CPU/req."""
    delta: float
    """after / before - 1 (negative for req/s, which regresses downwards)."""
    interval: tuple[float, float]

    @property
    def line(self) -> str:
        c = self.change
        low, high = self.interval
        what = "the search brackets allow after/before" if self.figure == "capacity" else \
            "95% interval of after/before"
        return f"{c.stack} {c.workload} ({c.knobs}): {self.figure} {self.delta:+.1%}, {what} [{low:.3f}, {high:.3f}]"


@dataclass(frozen=True)
class Comparison:
    before: str
    after: str
    changes: tuple[Change, ...]
    only_before: tuple[str, ...]
    only_after: tuple[str, ...]
    capacities: tuple[CapacityChange, ...] = ()
    """Tuning runs under the same objective: each candidate measured in both."""

    @property
    def significant(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.verdict in ("faster", "slower"))

    def regressions(self, threshold: float) -> tuple[Regression, ...]:
        """Figures significantly worse by more than `threshold` (a fraction): req/s whose
        after/before interval is below 1, p99 or CPU per request whose interval is above 1, each
        past the threshold. What a CI gate fails on. A change without an interval (one window a
        side) is never a regression: it cannot be told from noise."""
        found: list[Regression] = []
        for c in self.changes:
            if c.verdict == "slower" and c.rps_change is not None and c.rps_change < -threshold and c.ratio_ci:
                found.append(Regression(c, "req/s", c.rps_change, c.ratio_ci))
            for figure, before, after, ci in (("p99", c.p99_before, c.p99_after, c.p99_ci),
                                              ("CPU/req", c.cpu_before, c.cpu_after, c.cpu_ci)):
                if ci is not None and ci[0] > 1.0 and before and after is not None and after / before - 1 > threshold:
                    found.append(Regression(c, figure, after / before - 1, ci))
        for cap in self.capacities:
            bounds, delta = cap.interval, cap.change
            if bounds is not None and delta is not None and bounds[1] <= 1.0 and delta < -threshold:
                found.append(Regression(cap, "capacity", delta, bounds))
        return tuple(found)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _knobs(row: Row) -> str:
    return ", ".join(knob_labels(row.spec, omit=("stack_cpus",)))


def _verdict(ci: tuple[float, float] | None) -> str:
    if ci is None:
        return "no interval"
    if ci[0] > 1.0:
        return "faster"
    if ci[1] < 1.0:
        return "slower"
    return "within noise"


Key = tuple[str, Cell]


def _per_window(results: ResultSet, figure: Callable[[TrialResult], float | None]) -> dict[Key, list[float]]:
    """A figure of every valid window, by row (label and cell)."""
    found: dict[Key, list[float]] = {}
    for t in latest_trials(results.trials):
        if t.valid and (value := figure(t)) is not None and value > 0:
            found.setdefault((t.spec.label, t.spec.cell), []).append(value)
    return found


def _change(after: Row, before: Row) -> float | None:
    """after over before less 1: the ratio its interval (stats.ratio_ci) is for where it has one."""
    if after.rps is None or not before.rps:
        return None
    return (ratio_centre(after.rps_values, before.rps_values) or after.rps / before.rps) - 1


def compare_results(before: ResultSet, after: ResultSet) -> Comparison:
    rows_before: dict[Key, Row] = {(r.label, r.spec.cell): r for r in summarize(before).rows}
    rows_after: dict[Key, Row] = {(r.label, r.spec.cell): r for r in summarize(after).rows}
    p99 = _per_window(before, p99_of), _per_window(after, p99_of)
    cpu = _per_window(before, cpu_per_request), _per_window(after, cpu_per_request)
    changes: list[Change] = []
    for key in [k for k in rows_before if k in rows_after]:
        b, a = rows_before[key], rows_after[key]
        ci = ratio_ci(a.rps_values, b.rps_values)
        changes.append(Change(
            stack=a.label, workload=a.spec.workload, knobs=_knobs(a), rps_before=b.rps, rps_after=a.rps,
            rps_change=_change(a, b), ratio_ci=ci,
            p50_before=b.p50_ms, p50_after=a.p50_ms, p99_before=b.p99_ms, p99_after=a.p99_ms,
            cpu_before=b.cpu_ms_per_req, cpu_after=a.cpu_ms_per_req, verdict=_verdict(ci),
            p99_ci=ratio_ci(p99[1].get(key, ()), p99[0].get(key, ())),
            cpu_ci=ratio_ci(cpu[1].get(key, ()), cpu[0].get(key, ())),
        ))
    return Comparison(
        before=before.header.run_id, after=after.header.run_id, changes=tuple(changes),
        only_before=tuple(sorted({k[0] for k in rows_before if k not in rows_after})),
        only_after=tuple(sorted({k[0] for k in rows_after if k not in rows_before})),
        capacities=_capacities(before, after),
    )


def _capacities(before: ResultSet, after: ResultSet) -> tuple[CapacityChange, ...]:
    """Candidates of two tuning runs under the same latency objective, by label."""
    tuned_before, tuned_after = tuning_of(before), tuning_of(after)
    if tuned_before is None or tuned_after is None or not tuned_before.capacity \
            or tuned_before.objective != tuned_after.objective or tuned_before.workload != tuned_after.workload:
        return ()
    found_before = {r.config.label: r.measured.capacity for r in tuned_before.ranked if r.measured.capacity}
    changes = []
    for ranked in tuned_after.ranked:
        was, now = found_before.get(ranked.config.label), ranked.measured.capacity
        if was is not None and now is not None:
            changes.append(CapacityChange(ranked.config.label, tuned_after.workload,
                                          f"capacity under {tuned_after.objective}",
                                          (was.rate, was.failed_at), (now.rate, now.failed_at)))
    return tuple(changes)
