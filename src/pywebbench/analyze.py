"""From trials to report rows: per stack x workload x knobs, medians and the ratio to baseline."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from pywebbench.catalog.registry import BASELINE_STACK
from pywebbench.checks import RECOMPUTED, check_name, spread_check, trial_checks
from pywebbench.results.model import ResourceUsage, ResultSet, StackInfo, TrialResult, TrialSpec
from pywebbench.stats import Aggregation, aggregate, bootstrap_ci, half_width, ratio_ci

CELL_KNOBS: tuple[str, ...] = ("workload", "connections", "workers", "threads", "topology", "max_db_sessions",
                               "db_delay_s", "db_pool", "upstream_delay_s", "cpu_size", "stack_cpus", "rate")
"""Names of TrialSpec.cell's positions (stack_cpus is the count of CPUs given to the stack)."""

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
        groups[(trial.spec.label, trial.spec.cell)].append(trial)
    return groups


def _measured(trials: list[TrialResult]) -> list[TrialResult]:
    """The trials a figure is made of: the clean ones, or all loaded ones if none is clean.

    Seed 003 set erroring runs apart from clean ones; a stack that always errors still
    gets a (flagged) number rather than none.
    """
    loaded = [t for t in trials if t.load is not None]
    clean = [t for t in loaded if t.valid]
    return clean or loaded


def _rps_values(trials: list[TrialResult]) -> list[float]:
    return [t.load.rps for t in _measured(trials) if t.load is not None]


def run_aggregation(results: ResultSet) -> Aggregation:
    name = results.header.options.get("aggregation", Aggregation.MEDIAN.value)
    return Aggregation(name) if name in {a.value for a in Aggregation} else Aggregation.MEDIAN


def _spectrum(trials: list[TrialResult]) -> tuple[tuple[float, float], ...]:
    by_pct: dict[float, list[float]] = defaultdict(list)
    for t in trials:
        if t.load is not None:
            for pct, ms in t.load.latency.percentiles:
                by_pct[pct].append(ms)
    return tuple((pct, statistics.median(v)) for pct, v in sorted(by_pct.items()))


def varying_knobs(rows: tuple[Row, ...] | list[Row]) -> tuple[str, ...]:
    """The cell knobs (workload aside) that take more than one value across these rows: a sweep's axes."""
    cells = {r.spec.cell for r in rows}
    return tuple(name for i, name in enumerate(CELL_KNOBS)
                 if name != "workload" and len({cell[i] for cell in cells}) > 1)


def knob_values(row: Row, knobs: tuple[str, ...]) -> tuple[object, ...]:
    return tuple(row.spec.cell[CELL_KNOBS.index(k)] for k in knobs)


def point_text(row: Row, knobs: tuple[str, ...]) -> str:
    """'connections=100 db_delay=20ms' for a row's values of the varying knobs."""
    parts = []
    for name, value in zip(knobs, knob_values(row, knobs), strict=True):
        if name.endswith("_s") and isinstance(value, float):
            parts.append(f"{name[:-2]}={value * 1000:g}ms")
        elif isinstance(value, float):
            parts.append(f"{name}={value:g}")
        else:
            parts.append(f"{name}={value}")
    return " ".join(parts) or "defaults"


def recorded_ceilings(results: ResultSet) -> dict[tuple[object, ...], float]:
    """Generator ceilings the run measured, keyed as GeneratorCeiling keys them."""
    found: dict[tuple[object, ...], float] = {}
    for service in results.services:
        c = service.config
        if service.name == "generator-ceiling" and c.get("rps") and not c.get("errors"):
            key = (c.get("connections"), tuple(c.get("loadgen_cpus", ())), tuple(c.get("stack_cpus", ())))
            found[key] = float(c["rps"])
    return found


def rechecked(trial: TrialResult, ceilings: dict[tuple[object, ...], float]) -> tuple[str, ...]:
    """A trial's checks under the current rules, from its stored figures.

    Checks that need the live server (no-overlap) are kept as recorded; the rest are
    recomputed, so a corrected rule applies to old results files too.
    """
    if trial.load is None:
        return trial.checks
    spec = trial.spec
    ceiling = ceilings.get((spec.connections, spec.loadgen_cpus, spec.stack_cpus))
    now = trial_checks(trial, ceiling)
    firing = {check_name(c) for c in now}
    # A stored check that still fires keeps its recorded wording; one that no longer fires goes.
    kept = tuple(c for c in trial.checks if check_name(c) not in RECOMPUTED or check_name(c) in firing)
    kept_names = {check_name(c) for c in kept}
    return kept + tuple(c for c in now if check_name(c) not in kept_names)


def summarize(results: ResultSet, baseline: str = BASELINE_STACK, aggregation: Aggregation | None = None) -> Summary:
    how = aggregation or run_aggregation(results)
    ceilings = recorded_ceilings(results)
    groups = _group(results.trials)
    baseline_values = {cell: _rps_values(trials) for (label, cell), trials in groups.items() if label == baseline}
    rows: list[Row] = []
    missing: set[str] = set()
    for (_label, cell), trials in groups.items():
        loaded = [t for t in trials if t.load is not None]
        measured = _measured(trials)
        values = _rps_values(trials)
        rps = aggregate(values, how)
        base_values = baseline_values.get(cell) or []
        base = aggregate(base_values, how)
        if not base_values:
            missing.add(trials[0].spec.workload)
        ratio = rps / base if rps is not None and base else None
        rps_ci = bootstrap_ci(values, how)

        def pct(p: float, source: list[TrialResult] = measured) -> float | None:
            return _median([v for t in source if t.load and (v := t.load.latency.at(p)) is not None])

        def uncorrected(p: float) -> float | None:
            return _median([v for t in measured if t.load and t.load.latency_uncorrected
                            and (v := t.load.latency_uncorrected.at(p)) is not None])

        def usage(role: str, value: Callable[[TrialResult, ResourceUsage], float | None]) -> list[float]:
            found = []
            for t in measured:
                u = t.usage(role)
                if u is not None and (v := value(t, u)) is not None:
                    found.append(v)
            return found

        def cpu_ms(t: TrialResult, u: ResourceUsage) -> float | None:
            return 1000.0 * u.cpu_s / t.load.requests if t.load and t.load.requests else None

        worst = max(trials, key=lambda t: STATUS_ORDER.index(t.status.value))
        note = next((t.error for t in trials if t.error), None)
        checks = list(dict.fromkeys(c for t in trials for c in rechecked(t, ceilings)))
        spread = spread_check(rps_ci, rps, len(values))
        if spread:
            checks.append(spread)
        rss = usage("app", lambda t, u: u.peak_rss_mb)
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
                checks=tuple(checks),
                rps_values=tuple(values),
                rps_min=min(values, default=None),
                rps_max=max(values, default=None),
                rps_ci=rps_ci,
                ratio_ci=ratio_ci(values, base_values, how) if base_values else None,
                aggregation=how.value,
                clean_trials=sum(t.valid for t in trials),
                p95_ms=pct(95.0),
                p999_ms=pct(99.9),
                mean_ms=_median([t.load.latency.mean_ms for t in measured if t.load]),
                max_ms=_median([t.load.latency.max_ms for t in measured if t.load]),
                spectrum=_spectrum(measured),
                rate=trials[0].spec.rate,
                uncorrected_p50_ms=uncorrected(50.0),
                uncorrected_p99_ms=uncorrected(99.0),
                cpu_percent=_median(usage("app", lambda t, u: u.cpu_percent)),
                cpu_ms_per_req=_median(usage("app", cpu_ms)),
                rss_mb=max(rss) if rss else None,
                loadgen_cpu_percent=_median(usage("loadgen", lambda t, u: u.cpu_percent)),
                requests=sum(t.load.requests for t in loaded if t.load),
            )
        )
    rows.sort(key=lambda r: (repr(r.spec.cell), -(r.rps or -1.0), r.label))
    return Summary(tuple(rows), baseline, tuple(sorted(missing)))


def wide_rows(rows: tuple[Row, ...], precision: float) -> list[Row]:
    """Measured rows whose req/s interval is wider than ±precision, or that have none yet."""
    return [r for r in rows if r.rps is not None
            and ((w := half_width(r.rps_ci, r.rps)) is None or w > precision)]


def precision_note(results: ResultSet, summary: Summary) -> str | None:
    precision = results.header.options.get("precision")
    if not precision:
        return None
    rows = [r for r in summary.rows if r.rps is not None]
    wide = wide_rows(summary.rows, float(precision))
    rounds = max((t.spec.round for t in results.trials), default=0)
    if not wide:
        return f"precision: every interval within ±{float(precision):.0%} after {rounds} rounds"
    return (f"precision: {len(wide)} of {len(rows)} intervals still wider than ±{float(precision):.0%} after "
            f"{rounds} rounds (the round limit): {', '.join(sorted({r.label for r in wide}))}")
