"""From trials to report rows: per stack x workload x knobs, medians and the ratio to baseline."""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass

from pywebbench.catalog.registry import BASELINE_STACK
from pywebbench.results.model import ResultSet, StackInfo, TrialResult, TrialSpec

STATUS_ORDER = ("ok", "invalid-response", "loadgen-failed", "server-failed", "unavailable")


@dataclass(frozen=True)
class Row:
    stack: StackInfo
    spec: TrialSpec
    trials: int
    rps: float | None
    ratio: float | None
    p50_ms: float | None
    p90_ms: float | None
    p99_ms: float | None
    errors: int
    valid: bool
    keepalive: bool | None
    status: str
    note: str | None
    db_sessions: int | None = None
    checks: tuple[str, ...] = ()
    """Failed validity checks, 'name: what was seen' (see pywebbench.checks for the advice)."""
    # Spread across repeats (only trials with a load result count).
    rps_values: tuple[float, ...] = ()
    rps_min: float | None = None
    rps_max: float | None = None
    rps_ci: tuple[float, float] | None = None
    """Bootstrap 95% interval of the aggregated req/s; None with fewer than 2 repeats."""
    ratio_ci: tuple[float, float] | None = None
    aggregation: str = "median"
    """median, best (seed 003) or mean (seed 004): how rps was made from the repeats."""
    clean_trials: int = 0
    """Trials without errors; rps aggregates only these when there are any (seed 003)."""
    # Latency: medians across repeats.
    p95_ms: float | None = None
    p999_ms: float | None = None
    mean_ms: float | None = None
    max_ms: float | None = None
    spectrum: tuple[tuple[float, float], ...] = ()
    """(percentile, ms) ascending: the median across repeats of each percentile."""
    # Open loop.
    rate: float | None = None
    """Requested rate; achieved rate is rps."""
    uncorrected_p50_ms: float | None = None
    uncorrected_p99_ms: float | None = None
    # Resources (medians across repeats).
    cpu_percent: float | None = None
    """App server's CPU, percent of one core."""
    cpu_ms_per_req: float | None = None
    rss_mb: float | None = None
    """Peak RSS of the app server's process tree (master and workers summed)."""
    loadgen_cpu_percent: float | None = None
    requests: int = 0
    """Requests completed, summed over repeats."""

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    baseline: str
    baseline_missing: tuple[str, ...]
    """Workloads whose cells have no baseline measurement, so no ratio can be given."""


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _group(trials: tuple[TrialResult, ...]) -> dict[tuple[str, tuple[object, ...]], list[TrialResult]]:
    groups: dict[tuple[str, tuple[object, ...]], list[TrialResult]] = defaultdict(list)
    for trial in trials:
        groups[(trial.spec.stack_id, trial.spec.cell)].append(trial)
    return groups


def _cell_rps(trials: list[TrialResult]) -> float | None:
    return _median([t.load.rps for t in trials if t.load is not None])


def summarize(results: ResultSet, baseline: str = BASELINE_STACK) -> Summary:
    groups = _group(results.trials)
    baseline_rps = {cell: _cell_rps(trials) for (stack, cell), trials in groups.items() if stack == baseline}
    rows: list[Row] = []
    missing: set[str] = set()
    for (_stack_id, cell), trials in groups.items():
        loaded = [t for t in trials if t.load is not None]
        rps = _cell_rps(trials)
        base = baseline_rps.get(cell)
        if base is None:
            missing.add(trials[0].spec.workload)
        ratio = rps / base if rps is not None and base else None

        def pct(p: float) -> float | None:
            return _median([v for t in loaded if t.load and (v := t.load.latency.at(p)) is not None])

        worst = max(trials, key=lambda t: STATUS_ORDER.index(t.status.value))
        note = next((t.error for t in trials if t.error), None)
        rows.append(
            Row(
                stack=(loaded or trials)[-1].stack,
                spec=trials[0].spec,
                trials=len(trials),
                rps=rps,
                ratio=ratio,
                p50_ms=pct(50.0),
                p90_ms=pct(90.0),
                p99_ms=pct(99.0),
                errors=sum(t.load.errors for t in loaded if t.load),
                valid=all(t.valid for t in trials),
                keepalive=trials[0].keepalive,
                status=worst.status.value,
                note=note.splitlines()[0] if note else None,
                db_sessions=max((t.db_sessions for t in trials if t.db_sessions is not None), default=None),
                checks=tuple(dict.fromkeys(c for t in trials for c in t.checks)),
            )
        )
    rows.sort(key=lambda r: (repr(r.spec.cell), -(r.rps or -1.0), r.stack.id))
    return Summary(tuple(rows), baseline, tuple(sorted(missing)))
