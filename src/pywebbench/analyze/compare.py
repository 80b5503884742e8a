"""Two result sets side by side: what changed per stack x workload, and whether it is noise.

A change counts as significant when the bootstrap 95% interval of after/before req/s
excludes 1; with a single repeat on either side there is no interval, and the change is
shown but not judged.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

from pywebbench.plan.knobs import knob_labels
from pywebbench.analyze.rows import Row, summarize
from pywebbench.results.model import ResultSet
from pywebbench.analyze.stats import ratio_ci


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


@dataclass(frozen=True)
class Comparison:
    before: str
    after: str
    changes: tuple[Change, ...]
    only_before: tuple[str, ...]
    only_after: tuple[str, ...]

    @property
    def significant(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.verdict in ("faster", "slower"))

    def regressions(self, threshold: float) -> tuple[Change, ...]:
        """Rows significantly slower (the interval of after/before req/s below 1) by more than
        `threshold` (a fraction): what a CI gate fails on. A change without an interval (one
        repeat) is never a regression: it cannot be told from noise."""
        return tuple(c for c in self.changes
                     if c.verdict == "slower" and c.rps_change is not None and c.rps_change < -threshold)

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


def compare_results(before: ResultSet, after: ResultSet) -> Comparison:
    rows_before = {(r.label, r.spec.cell): r for r in summarize(before).rows}
    rows_after = {(r.label, r.spec.cell): r for r in summarize(after).rows}
    changes: list[Change] = []
    for key in [k for k in rows_before if k in rows_after]:
        b, a = rows_before[key], rows_after[key]
        ci = ratio_ci(a.rps_values, b.rps_values)
        changes.append(Change(
            stack=a.label, workload=a.spec.workload, knobs=_knobs(a), rps_before=b.rps, rps_after=a.rps,
            rps_change=a.rps / b.rps - 1 if a.rps is not None and b.rps else None, ratio_ci=ci,
            p50_before=b.p50_ms, p50_after=a.p50_ms, p99_before=b.p99_ms, p99_after=a.p99_ms,
            cpu_before=b.cpu_ms_per_req, cpu_after=a.cpu_ms_per_req, verdict=_verdict(ci),
        ))
    return Comparison(
        before=before.header.run_id, after=after.header.run_id, changes=tuple(changes),
        only_before=tuple(sorted({k[0] for k in rows_before if k not in rows_after})),
        only_after=tuple(sorted({k[0] for k in rows_after if k not in rows_before})),
    )
