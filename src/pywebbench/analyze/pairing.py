"""A row's windows paired with the baseline's: the per-round ratios a paired row is made of.

Interleaved: the row's window over the baseline's in the same round. Duet: the least-squares
fit over every pair a round loaded (analyze/duet.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pywebbench.analyze.duet import PairSide, round_ratios, with_duet_term
from pywebbench.analyze.paired import (
    Interval,
    Observation,
    launches_of,
    paired_ratios,
    statistic_value,
    table_intervals,
    why_no_interval,
)
from pywebbench.analyze.moderation import NO_PRIOR, Prior
from pywebbench.measure.checks import neighbours_busy
from pywebbench.plan.interval_rule import SPREADS_TO_POOL, why_none
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import TrialResult


def counted(trial: TrialResult) -> bool:
    """A window that enters the ratios: valid, and not shaped by the run's other servers' backlog."""
    return trial.valid and not neighbours_busy(trial)


def observations(trials: list[TrialResult], value: Callable[[TrialResult], float | None]) -> list[Observation]:
    """Counted windows as (launch, round, value)."""
    found = []
    for t in trials:
        if not counted(t):
            continue
        v = value(t)
        if v is not None and v > 0:
            found.append(Observation(t.spec.launch or t.spec.round, t.spec.round, v))
    return found


def rps_of(trial: TrialResult) -> float | None:
    return trial.load.rps if trial.load is not None else None


def p99_of(trial: TrialResult) -> float | None:
    return trial.load.latency.at(99.0) if trial.load is not None else None


def app_cpu_of(trial: TrialResult) -> float | None:
    """CPU-seconds the app server used in the window: under the duet, the share it took."""
    usage = trial.usage("app")
    return usage.cpu_s if usage is not None else None


def requests_per_cpu_second(trial: TrialResult) -> float | None:
    """What the app server made of the CPU it used: the inverse of CPU per request."""
    cost = cpu_per_request(trial)
    return 1.0 / cost if cost else None


def cpu_per_request(trial: TrialResult) -> float | None:
    usage = trial.usage("app")
    if usage is None or trial.load is None or not trial.load.requests:
        return None
    return usage.cpu_s / trial.load.requests


@dataclass(frozen=True)
class Paired:
    ratios: tuple[Observation, ...]
    interval: Interval | None
    cpu_interval: Interval | None
    cpu_center: float | None
    cpu_ratios: tuple[Observation, ...] = ()
    why_none: str | None = None
    """Why there is no interval ("needs 3 launches"), for the table to say instead of a range."""
    duet: bool = False
    """Its intervals carry the duet's run-level term (analyze/duet.DUET_RUN_SD)."""


def paired_to_baseline(trials: list[TrialResult], base_trials: list[TrialResult], label: str,
                       cell_trials: Sequence[TrialResult] = ()) -> Paired:
    """Per-round ratios of a row to the baseline in the same cell, without intervals: a row's
    interval depends on its table's other rows (moderated_table gives it).

    Interleaved: the row's window over the baseline's in the same round. Duet: least squares
    over every pair the round loaded (`cell_trials`: all of the cell's windows).
    """
    duet = any(strategy_of(t.spec.method).side_by_side for t in trials)
    ratios = figure_ratios(trials, base_trials, label, rps_of, cell_trials)
    cpu = figure_ratios(trials, base_trials, label, cpu_per_request, cell_trials)
    return Paired(ratios, None, None, statistic_value(cpu), tuple(cpu), why_no_interval(ratios), duet)


def figure_ratios(trials: list[TrialResult], base_trials: list[TrialResult], label: str,
                  value: Callable[[TrialResult], float | None],
                  cell_trials: Sequence[TrialResult] = ()) -> tuple[Observation, ...]:
    """A figure's per-round ratios of a row to the baseline: interleaved, window over window in
    the same round; duet, least squares over every pair the round loaded."""
    if any(strategy_of(t.spec.method).side_by_side for t in trials):
        everything = list(cell_trials) or trials + base_trials
        return round_ratios(pair_sides(everything, value), label, base_trials[0].spec.label)
    return paired_ratios(observations(trials, value), observations(base_trials, value))


def _same(interval: Interval | None) -> Interval | None:
    return interval


def moderated_table(table: dict[str, Paired]) -> tuple[dict[str, Paired], Prior]:
    """The rows of one table with their intervals moderated across each other (paired.table_intervals).

    Returns the rows and the req/s prior the table's own parts lent (for its ranking's ties).
    """
    rated = {label: p for label, p in table.items() if p.ratios}
    if not rated:
        return table, NO_PRIOR
    rps, prior = table_intervals({label: p.ratios for label, p in rated.items()})
    cpu, _ = table_intervals({label: p.cpu_ratios for label, p in rated.items()})
    out = dict(table)
    # A table of enough ratios lends a spread once it has two launches: one launch "needs 2", not 3.
    lends = prior.df > 0 or len(rated) >= SPREADS_TO_POOL
    for label, p in rated.items():
        widen = with_duet_term if p.duet else _same
        rps_interval, cpu_interval = widen(rps[label]), widen(cpu[label])
        centre = p.cpu_center if cpu_interval is None else cpu_interval.center
        out[label] = Paired(p.ratios, rps_interval, cpu_interval, centre, p.cpu_ratios,
                            None if rps_interval else why_none(launches_of(p.ratios), lends), p.duet)
    return out, prior


def pair_sides(trials: Sequence[TrialResult], value: Callable[[TrialResult], float | None]) -> list[PairSide]:
    """Valid duet windows as sides of their pair."""
    found = []
    for t in trials:
        v = value(t) if counted(t) else None
        if v is not None and v > 0:
            found.append(PairSide(t.spec.launch or t.spec.round, t.spec.round, t.spec.label, t.spec.partner, v))
    return found
