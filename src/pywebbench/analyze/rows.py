"""From trials to report rows: per stack x workload x knobs, medians and the ratio to baseline."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any
from dataclasses import dataclass, field, replace

from pywebbench.catalog.registry import BASELINE_STACK
from pywebbench.analyze.rechecks import rechecked, recorded_ceilings, spread_check
from pywebbench.analyze.shape_figures import ShapeRow, shape_row
from pywebbench.analyze.moderation import NO_PRIOR, Prior
from pywebbench.analyze.neighbours import EQUIVALENCE, rank_with_verdicts
from pywebbench.analyze.pairing import Paired, moderated_table, observations, paired_to_baseline, rps_of
from pywebbench.analyze.paired import (
    Interval,
    Observation,
    launch_centre,
    min_detectable,
)
from pywebbench.results.model import (
    Cell, Method, ProfileRecord, ResourceUsage, ResultSet, StackInfo, TrialResult, TrialSpec,
)
from pywebbench.analyze.stats import Aggregation, aggregate, aggregate_ci, ratio_centre, ratio_ci

CELL_KNOBS: tuple[str, ...] = Cell._fields
"""The knobs of a cell, in order (stack_cpus is the count of CPUs given to the stack)."""

STATUS_ORDER = ("ok", "invalid-response", "loadgen-failed", "service-failed", "server-oom", "server-failed", "unavailable")


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
    """Failed validity checks, 'name: what was seen' (see pywebbench.measure.checks for the advice),
    each sentence once."""
    window_checks: tuple[tuple[str, ...], ...] = ()
    """Each window's checks under today's rules, in the row's window order: how many windows a
    check flagged (report/check_summary.py), which `checks` cannot say."""
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
    # The paired method (interleaved, duet): ratios within a round, intervals over rounds in launches.
    method: Method = Method.RESTART
    rounds: int = 0
    launches: int = 0
    ratio_interval: Interval | None = None
    """Paired ratio to the baseline: its center is `ratio`; None under the restart method."""
    cpu_ratio: float | None = None
    """CPU per request relative to the baseline's in the same rounds (paired)."""
    cpu_ratio_ci: tuple[float, float] | None = None
    cpu_ratio_interval: Interval | None = None
    mde: float | None = None
    """Smallest difference from the baseline detectable at 80% power with the rounds spent."""
    next_verdict: str | None = None
    """This row against the next one down in its table's ranking: different, equivalent (within the
    run's --equivalence margin) or unresolved (analyze/neighbours.PairVerdict); None for the last."""
    interval_note: str | None = None
    """Why a paired row has no ratio interval ("needs 3 launches"): said where the range would be."""
    tie_group: int | None = None
    """Rows of one cell with the same number are tied: their paired ratio's interval holds 1."""
    cpu_source: str = ""
    profile: ProfileRecord | None = None
    """Its profiled window (--profile), of the same stack and cell; None without one."""
    shape: ShapeRow | None = None
    """A connection-shape workload's own figures with their intervals (analyze/shape_figures.py)."""

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass(frozen=True)
class Summary:
    rows: tuple[Row, ...]
    baseline: str
    baseline_missing: tuple[str, ...]
    """Workloads whose cells have no baseline measurement, so no ratio can be given."""
    priors: Mapping[tuple[object, ...], Prior] = field(default_factory=dict)
    """Each cell's own-part spread its stacks lent each other: what a ratio between two of its
    rows borrows (neighbours.pair_prior)."""


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
    # A hand-edited header may hold anything here (a list is unhashable): unknown reads as the default.
    return Aggregation(name) if isinstance(name, str) and name in {a.value for a in Aggregation} else Aggregation.MEDIAN


def _spectrum(trials: list[TrialResult]) -> tuple[tuple[float, float], ...]:
    by_pct: dict[float, list[float]] = defaultdict(list)
    for t in trials:
        if t.load is not None:
            for pct, ms in t.load.latency.percentiles:
                by_pct[pct].append(ms)
    return tuple((pct, statistics.median(v)) for pct, v in sorted(by_pct.items()))


def ranked_rows(rows: Iterable[Row]) -> list[Row]:
    """The rows with a paired ratio in the ranking's order, cell by cell as `summarize` orders them
    and best first within each: the order each row's `next_verdict` (against the row below) was
    decided in (analyze/neighbours.py)."""
    return sorted((r for r in rows if r.method.paired and r.ratio is not None),
                  key=lambda r: (repr(r.spec.cell), -(r.ratio or 0.0)))


def latest_trials(trials: tuple[TrialResult, ...]) -> tuple[TrialResult, ...]:
    """One trial per id, the last recorded: a resumed round that re-ran a window replaces it."""
    latest: dict[str, TrialResult] = {}
    for trial in trials:
        latest.pop(trial.spec.trial_id, None)
        latest[trial.spec.trial_id] = trial
    return tuple(latest.values())


def run_equivalence(results: ResultSet) -> float:
    """The run's --equivalence margin (the default for runs made before it was an option)."""
    stored = results.header.options.get("equivalence")
    return float(stored) if isinstance(stored, (int, float)) and 0 < stored < 1 else EQUIVALENCE


def run_baseline(results: ResultSet) -> str:
    """The stack every ratio is to: the run's own (calibrate's A), else the catalog's baseline."""
    stored = results.header.options.get("baseline")
    return stored if isinstance(stored, str) and stored else BASELINE_STACK


def summarize(results: ResultSet, baseline: str | None = None, aggregation: Aggregation | None = None) -> Summary:
    baseline = baseline or run_baseline(results)
    how = aggregation or run_aggregation(results)
    ceilings = recorded_ceilings(results)
    groups = _group(latest_trials(results.trials))
    base_trials = {cell: trials for (label, cell), trials in groups.items() if label == baseline}
    cells = _cells(groups)
    paired, priors = _paired_tables(groups, base_trials, baseline, cells)
    rows = [_row(label, trials, base_trials.get(cell, []), how, ceilings, paired[(label, cell)])
            for (label, cell), trials in groups.items()]
    missing = {trials[0].spec.workload for (_label, cell), trials in groups.items() if not _rps_values(
        base_trials.get(cell, []))}
    rows = _with_ties(rows, groups, baseline, cells, paired, priors, run_equivalence(results))
    # Paired rows rank by their ratio, the figure their ties are decided on.
    rows.sort(key=lambda r: (repr(r.spec.cell), -((r.ratio if r.method.paired else r.rps) or -1.0), r.label))
    profiles = {(p.label, p.spec.cell): p for p in results.profiles}  # beside the row, never in its figures
    rows = [replace(r, profile=profiles.get((r.label, r.spec.cell))) for r in rows]
    return Summary(tuple(rows), baseline, tuple(sorted(missing)), priors)


def _cells(groups: dict[tuple[str, tuple[object, ...]], list[TrialResult]]) -> dict[tuple[object, ...],
                                                                                 list[TrialResult]]:
    """Every window of each cell, whatever its stack (a duet round's pairs are read together)."""
    cells: dict[tuple[object, ...], list[TrialResult]] = defaultdict(list)
    for (_label, cell), trials in groups.items():
        cells[cell] += trials
    return cells


def _paired_tables(groups: dict[tuple[str, tuple[object, ...]], list[TrialResult]],
                   base_trials: dict[tuple[object, ...], list[TrialResult]], baseline: str,
                   cells: dict[tuple[object, ...], list[TrialResult]],
                   ) -> tuple[dict[tuple[str, tuple[object, ...]], Paired | None], dict[tuple[object, ...], Prior]]:
    """Each row's ratios to the baseline, the intervals of each cell's rows moderated together."""
    out: dict[tuple[str, tuple[object, ...]], Paired | None] = {}
    by_cell: dict[tuple[object, ...], dict[str, Paired]] = defaultdict(dict)
    for (label, cell), trials in groups.items():
        out[(label, cell)] = found = _paired(label, trials, base_trials.get(cell, []), baseline, cells[cell])
        if found is not None and found.ratios:
            by_cell[cell][label] = found
    priors: dict[tuple[object, ...], Prior] = {}
    for cell, table in by_cell.items():
        moderated, priors[cell] = moderated_table(table)
        out.update({(label, cell): p for label, p in moderated.items()})
    return out, priors


def _paired(label: str, trials: list[TrialResult], base: list[TrialResult], baseline: str,
            cell_trials: Sequence[TrialResult]) -> Paired | None:
    """The row's per-round ratios to the baseline (paired methods only); the baseline's own is 1."""
    if not trials[-1].spec.method.paired or not base:
        return None
    if label == baseline:
        return Paired((), None, None, 1.0)
    return paired_to_baseline(trials, base, label, cell_trials)


def _row_checks(per_window: Sequence[Sequence[str]], paired: Paired | None,
                rps_ci: tuple[float, float] | None, rps: float | None, repeats: int) -> tuple[str, ...]:
    """Every window's checks, each sentence once, then the spread of the row's own interval."""
    checks = list(dict.fromkeys(c for window in per_window for c in window))
    if paired is not None and paired.interval is not None:
        spread = spread_check((paired.interval.low, paired.interval.high), paired.interval.center, repeats)
    elif paired is None:
        spread = spread_check(rps_ci, rps, repeats)
    else:
        spread = None
    return tuple(checks) + ((spread,) if spread else ())


def _latencies(measured: list[TrialResult]) -> dict[str, Any]:
    """Median over windows of each latency point, corrected and (open loop) uncorrected."""
    def at(p: float) -> float | None:
        return _median([v for t in measured if t.load and (v := t.load.latency.at(p)) is not None])

    def uncorrected(p: float) -> float | None:
        return _median([v for t in measured if t.load and t.load.latency_uncorrected
                        and (v := t.load.latency_uncorrected.at(p)) is not None])

    return dict(
        p50_ms=at(50.0), p90_ms=at(90.0), p95_ms=at(95.0), p99_ms=at(99.0), p999_ms=at(99.9),
        mean_ms=_median([t.load.latency.mean_ms for t in measured if t.load]),
        max_ms=_median([t.load.latency.max_ms for t in measured if t.load]),
        spectrum=_spectrum(measured), uncorrected_p50_ms=uncorrected(50.0), uncorrected_p99_ms=uncorrected(99.0),
    )


def _resources(measured: list[TrialResult]) -> dict[str, Any]:
    """CPU and memory of the app and the generator, per window then summarised."""
    def usage(role: str, value: Callable[[TrialResult, ResourceUsage], float | None]) -> list[float]:
        found = []
        for t in measured:
            u = t.usage(role)
            if u is not None and (v := value(t, u)) is not None:
                found.append(v)
        return found

    def cpu_ms(t: TrialResult, u: ResourceUsage) -> float | None:
        return 1000.0 * u.cpu_s / t.load.requests if t.load and t.load.requests else None

    rss = usage("app", lambda t, u: u.peak_rss_mb)
    return dict(
        cpu_percent=_median(usage("app", lambda t, u: u.cpu_percent)), cpu_ms_per_req=_median(usage("app", cpu_ms)),
        rss_mb=max(rss) if rss else None, loadgen_cpu_percent=_median(usage("loadgen", lambda t, u: u.cpu_percent)),
    )


def _paired_fields(paired: Paired | None) -> dict[str, Any]:
    interval = paired.interval if paired is not None else None
    cpu = paired.cpu_interval if paired is not None else None
    return dict(
        ratio_interval=interval, cpu_ratio=paired.cpu_center if paired is not None else None,
        cpu_ratio_ci=(cpu.low, cpu.high) if cpu is not None else None, cpu_ratio_interval=cpu,
        mde=min_detectable(interval) if interval is not None else None,
        interval_note=paired.why_none if paired is not None else None,
    )


def _row(label: str, trials: list[TrialResult], base: list[TrialResult], how: Aggregation,
         ceilings: dict[tuple[object, ...], float], paired: Paired | None) -> Row:
    """One stack x cell: its windows summarised, and its ratio to the baseline's in the same cell."""
    loaded = [t for t in trials if t.load is not None]
    measured = _measured(trials)
    values, base_values = _rps_values(trials), _rps_values(base)
    rps, base_rps = aggregate(values, how), aggregate(base_values, how)
    # restart: the ratio its interval (stats.ratio_ci) is for, not the medians' ratio
    ratio = ratio_centre(values, base_values, how) if rps is not None and base_rps else None
    if paired is not None and paired.ratios:
        ratio = launch_centre(paired.ratios)
    rps_ci = aggregate_ci(values, how)
    worst = max(trials, key=lambda t: STATUS_ORDER.index(t.status.value))
    note = next((t.error for t in trials if t.error), None)
    per_window = tuple(rechecked(t, ceilings) for t in trials)
    return Row(
        stack=(loaded or trials)[-1].stack, spec=trials[0].spec, trials=len(trials), rps=rps, ratio=ratio,
        errors=sum(t.load.errors for t in loaded if t.load), valid=all(t.valid for t in trials),
        keepalive=trials[0].keepalive, status=worst.status.value, note=note.splitlines()[0] if note else None,
        db_sessions=max((t.db_sessions for t in trials if t.db_sessions is not None), default=None),
        checks=_row_checks(per_window, paired, rps_ci, rps, len(values)), window_checks=per_window,
        rps_values=tuple(values), rps_min=min(values, default=None), rps_max=max(values, default=None),
        rps_ci=rps_ci, ratio_ci=_ratio_ci(paired, values, base_values, how), aggregation=how.value,
        clean_trials=sum(t.valid for t in trials), rate=trials[0].spec.rate,
        requests=sum(t.load.requests for t in loaded if t.load), method=trials[-1].spec.method,
        rounds=len({t.spec.round for t in measured}), launches=len({t.spec.launch or t.spec.round for t in measured}),
        cpu_source=trials[-1].cpu_source, shape=shape_row(measured),
        **_latencies(measured), **_resources(measured), **_paired_fields(paired),
    )


def _ratio_ci(paired: Paired | None, values: list[float], base_values: list[float],
              how: Aggregation) -> tuple[float, float] | None:
    if paired is not None:
        if paired.interval is None:
            return (1.0, 1.0) if not paired.ratios and paired.cpu_center == 1.0 else None
        return (paired.interval.low, paired.interval.high)
    return ratio_ci(values, base_values, how) if base_values else None


def _with_ties(rows: list[Row], groups: dict[tuple[str, tuple[object, ...]], list[TrialResult]],
               baseline: str, cells: dict[tuple[object, ...], list[TrialResult]],
               paired: dict[tuple[str, tuple[object, ...]], Paired | None],
               priors: dict[tuple[object, ...], Prior], margin: float) -> list[Row]:
    """Tie groups per cell from each row's per-round ratio to the baseline (paired methods only).

    Neighbours in the ranking are compared by their own paired ratio, round by round, not by
    whether their intervals to the baseline overlap, which would call far more pairs tied.
    """
    out: list[Row] = []
    by_cell: dict[tuple[object, ...], list[Row]] = defaultdict(list)
    for row in rows:
        by_cell[row.spec.cell].append(row)
    for cell, cell_rows in by_cell.items():
        base = groups.get((baseline, cell))
        if base is None or all(not r.method.paired for r in cell_rows):
            out += cell_rows
            continue
        items = []
        for row in cell_rows:
            if row.label == baseline:
                # A duet baseline has a window per partner in each round: one "1" per round.
                keys = dict.fromkeys((o.launch, o.round) for o in observations(base, rps_of))
                items.append((row.label, [Observation(launch, round_no, 1.0) for launch, round_no in keys]))
            else:
                # The ratios _paired_tables made (a restart row among paired ones has none there).
                made = paired.get((row.label, cell))
                ratios = made.ratios if made is not None else \
                    paired_to_baseline(groups[(row.label, cell)], base, row.label, cells[cell]).ratios
                items.append((row.label, list(ratios)))
        intervals = {r.label: made.interval for r in cell_rows if (made := paired.get((r.label, cell))) is not None}
        ranking = rank_with_verdicts(items, prior=priors.get(cell, NO_PRIOR), margin=margin, intervals=intervals,
                                    baseline=baseline)
        found = {label: (group, verdict.value if verdict is not None else None) for label, group, verdict in ranking}
        out += [replace(r, tie_group=found[r.label][0], next_verdict=found[r.label][1]) if r.label in found else r
                for r in cell_rows]
    return out
