"""Whether a run agrees with a seed: one stack against another, a seed's stated orderings, and
how two rankings of the same stacks relate (seed 000's lesson), each with the noise that decides it.

A seed published one number per stack and no interval; ours carries one. So a seed's figure
is read for the order it states (X above Y, or X level with Y), and ours decides the same
order with its interval: outside the noise, tied (the interval holds 1), or unresolved (no
interval: a single window). Values only; report/pages/seeds renders them.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from pywebbench.analyze.paired import (
    CONFIDENCE,
    Observation,
    Statistic,
    launches_of,
    ratio_interval,
    row_statistics,
    statistic_value,
)
from pywebbench.analyze.moderation import NO_PRIOR, Prior
from pywebbench.analyze.neighbours import pair_prior
from pywebbench.analyze.ranking import Comparison, Flip, Ranked, Score, compare, rank
from pywebbench.analyze.pairing import paired_to_baseline
from pywebbench.analyze.rows import Row, latest_trials
from pywebbench.analyze.stats import Aggregation, ratio_centre, ratio_ci
from pywebbench.plan.interval_rule import OWN_DF
from pywebbench.plan.knob_values import knob_value
from pywebbench.plan.presets import Claim
from pywebbench.results.model import ResultSet, TrialResult

LEVEL_TOLERANCE = 0.005
"""A published ratio within this of 1 states 'level' (the seeds print two decimals)."""


class Order(StrEnum):
    """Where one stack stands against another in our run."""

    ABOVE = "above"
    BELOW = "below"
    TIED = "tied"
    """The interval of their ratio holds 1: what was spent cannot tell them apart."""
    UNRESOLVED = "unresolved"
    """No interval (one window each): the values have an order, the noise is unknown."""


class Verdict(StrEnum):
    AGREES = "agrees"
    TIED = "tied here"
    """The seed states an order; ours cannot tell the two apart."""
    DIFFERS = "differs"
    UNRESOLVED = "unresolved"
    NOT_MEASURED = "not measured"


@dataclass(frozen=True)
class Estimate:
    """Our ratio of one stack to another, with its 95% interval when there is one."""

    value: float
    low: float | None = None
    high: float | None = None
    paired: bool = False
    """From ratios within rounds (the interleaved and duet methods); else from each side's own spread."""

    @property
    def order(self) -> Order:
        if self.low is None or self.high is None:
            return Order.UNRESOLVED
        if self.low > 1.0:
            return Order.ABOVE
        if self.high < 1.0:
            return Order.BELOW
        return Order.TIED


def _interval_of(row: Row) -> tuple[float, float] | None:
    if row.ratio_interval is not None:
        return (row.ratio_interval.low, row.ratio_interval.high)
    return row.ratio_ci


def unpaired(row: Row, other: Row) -> Estimate | None:
    """row's req/s over other's, from independent repeats: Welch's t on the logs of both sides'
    windows (stats.ratio_ci), none for the best of N or below two windows a side."""
    if row.rps is None or not other.rps:
        return None
    how = Aggregation(row.aggregation)
    value = ratio_centre(row.rps_values, other.rps_values, how) or row.rps / other.rps
    interval = ratio_ci(row.rps_values, other.rps_values, how)
    return Estimate(value) if interval is None else Estimate(value, interval[0], interval[1])


def to_baseline(row: Row, baseline: Row) -> Estimate | None:
    """row against the run's baseline: its own paired ratio when they share a cell."""
    if row.spec.cell == baseline.spec.cell and row.ratio is not None:
        interval = _interval_of(row)
        if row.label == baseline.label:
            return Estimate(1.0, 1.0, 1.0, paired=True)
        if interval is None:
            return Estimate(row.ratio, paired=row.method.paired)
        return Estimate(row.ratio, interval[0], interval[1], paired=row.ratio_interval is not None)
    return unpaired(row, baseline)


def _trials(results: ResultSet, row: Row) -> list[TrialResult]:
    return [t for t in latest_trials(results.trials) if t.spec.label == row.label and t.spec.cell == row.spec.cell]


def _cell(results: ResultSet, row: Row) -> list[TrialResult]:
    """Every window of the row's cell: a duet's ratios are fitted over all pairs of its rounds."""
    return [t for t in latest_trials(results.trials) if t.spec.cell == row.spec.cell]


def between(results: ResultSet, a: Row, b: Row, *, prior: Prior = NO_PRIOR, seed: int = 0) -> Estimate | None:
    """a against b: their own paired ratio, round by round, when they shared rounds; else unpaired.

    Comparing two rows through their intervals to a baseline would call far more pairs tied
    than the rounds say: the pairing is what cancels the machine's drift. `prior`: their
    table's own-part spread (Summary.priors), which a ranking's neighbours borrow too.
    """
    if a.spec.cell == b.spec.cell and a.method.paired and b.method.paired:
        ratios = paired_to_baseline(_trials(results, a), _trials(results, b), a.label, _cell(results, a)).ratios
        interval = ratio_interval(ratios, prior=pair_prior(prior))
        if interval is not None:
            return Estimate(interval.center, interval.low, interval.high, paired=True)
        # Their launches cannot support an interval: the unpaired one would hide the
        # drift the pairing cancels and claim what the rounds do not.
        geomean = statistic_value(ratios, Statistic.GEOMEAN) if ratios else None
        return Estimate(geomean, paired=True) if geomean is not None else None
    return unpaired(a, b)


def published_order(ratio: float) -> Order:
    """The order a seed's ratio of two stacks states: above, below, or level (TIED)."""
    if abs(ratio - 1.0) <= LEVEL_TOLERANCE:
        return Order.TIED
    return Order.ABOVE if ratio > 1.0 else Order.BELOW


def verdict(seed: Order, ours: Order) -> Verdict:
    """The seed's stated order (ABOVE, BELOW, or TIED for 'level') against ours."""
    if ours is Order.UNRESOLVED or seed is Order.UNRESOLVED:
        return Verdict.UNRESOLVED
    if seed is Order.TIED:
        return Verdict.AGREES if ours is Order.TIED else Verdict.DIFFERS
    if ours is Order.TIED:
        return Verdict.TIED
    return Verdict.AGREES if ours is seed else Verdict.DIFFERS


def matches(row: Row, label: str, workload: str, where: Sequence[tuple[str, float]]) -> bool:
    """The row of `label` on `workload` at the grid point `where` (empty: any point)."""
    if row.label != label or row.spec.workload != workload:
        return False
    cell = row.spec.cell  # the cell counts stack_cpus, as a grid point names it
    return all(knob_value(cell, knob) == value for knob, value in where)


@dataclass(frozen=True)
class PairCheck:
    higher: Row
    lower: Row
    estimate: Estimate | None
    verdict: Verdict


@dataclass(frozen=True)
class ClaimCheck:
    claim: Claim
    pairs: tuple[PairCheck, ...]
    """Every (higher, lower) pair of rows the claim names that our run measured."""

    @property
    def verdict(self) -> Verdict:
        """Differs if any pair differs; agrees only if every pair agrees; else tied or unresolved."""
        found = {p.verdict for p in self.pairs}
        if not found:
            return Verdict.NOT_MEASURED
        for kind in (Verdict.DIFFERS, Verdict.TIED, Verdict.UNRESOLVED):
            if kind in found:
                return kind
        return Verdict.AGREES

    def count(self, kind: Verdict) -> int:
        return sum(p.verdict is kind for p in self.pairs)


def check_claim(results: ResultSet, rows: Sequence[Row], claim: Claim,
                priors: Mapping[tuple[object, ...], Prior] | None = None) -> ClaimCheck:
    """Each pair the claim names, decided by our paired ratio of the two (or unpaired across cells);
    `priors`: each cell's lent spread (Summary.priors)."""
    def side(labels: tuple[str, ...]) -> list[Row]:
        return [r for r in rows for label in labels if matches(r, label, claim.workload, claim.where)]

    checks = []
    for high, low in itertools.product(side(claim.higher), side(claim.lower)):
        if high.label == low.label and high.spec.cell == low.spec.cell:
            continue
        estimate = between(results, high, low, prior=(priors or {}).get(high.spec.cell, NO_PRIOR))
        order = estimate.order if estimate is not None else Order.UNRESOLVED
        checks.append(PairCheck(high, low, estimate, verdict(Order.TIED if claim.level else Order.ABOVE, order)))
    return ClaimCheck(claim, tuple(checks))


# --- two rankings of the same stacks (seed 000: Better Async against Better Sync) -----------


def kendall_tau_b(xs: Sequence[float], ys: Sequence[float]) -> float | None:
    """Kendall's tau-b of two scorings of the same items; None below two items or when one side is all ties."""
    if len(xs) != len(ys):
        raise ValueError("two scorings of different lengths")
    taus = _tau_b_rows(np.asarray([xs], dtype=float), np.asarray([ys], dtype=float))
    return None if math.isnan(taus[0]) else float(taus[0])


def _tau_b_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """tau-b of each row of x against the same row of y (NaN where undefined)."""
    if x.shape[1] < 2:
        return np.full(x.shape[0], np.nan)
    i, j = np.triu_indices(x.shape[1], k=1)
    dx, dy = np.sign(x[:, i] - x[:, j]), np.sign(y[:, i] - y[:, j])
    denominator = np.sqrt((dx != 0).sum(axis=1) * (dy != 0).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        taus: np.ndarray = np.where(denominator > 0, (dx * dy).sum(axis=1) / denominator, np.nan)
    return taus


def round_ratios(results: ResultSet, rows: Sequence[Row], baseline: str) -> dict[str, tuple[Observation, ...]]:
    """Each row's per-round ratios to the baseline in its cell; the baseline's own are left empty."""
    base = {r.spec.cell: r for r in rows if r.label == baseline}
    out: dict[str, tuple[Observation, ...]] = {}
    for row in rows:
        partner = base.get(row.spec.cell)
        if partner is None or row.label == baseline or not row.method.paired:
            continue
        out[row.label] = paired_to_baseline(_trials(results, row), _trials(results, partner), row.label,
                                            _cell(results, row)).ratios
    return out


@dataclass(frozen=True)
class TauInterval:
    center: float
    low: float
    high: float
    resamples: int
    """Resamples that gave a tau (a resample with a stack left without a round gives none)."""


def _resampled_logs(ratios: Mapping[str, Sequence[Observation]], stacks: Sequence[str], resamples: int,
                    rng: np.random.Generator) -> np.ndarray:
    """(resamples x stacks) log statistics: launches with replacement, then rounds within each.

    The same rounds are drawn for every stack, so what one round did to all of them stays
    together. The two-stage draw counts the within-launch noise twice (paired.ratio_interval
    says why it avoids it there): the interval errs wide, not narrow.
    """
    keys = sorted({(o.launch, o.round) for label in stacks for o in ratios.get(label, ())})
    column = {key: n for n, key in enumerate(keys)}
    logs = np.full((len(stacks), len(keys)), np.nan)
    for s, label in enumerate(stacks):
        for o in ratios.get(label, ()):
            logs[s, column[(o.launch, o.round)]] = math.log(o.value)
    launches = sorted({launch for launch, _ in keys})
    members = [np.asarray([column[k] for k in keys if k[0] == launch]) for launch in launches]
    out = np.empty((resamples, len(stacks)))
    for b in range(resamples):
        chosen = rng.integers(0, len(members), size=len(members))
        index = np.concatenate([members[c][rng.integers(0, members[c].size, size=members[c].size)] for c in chosen])
        out[b] = row_statistics(logs[:, index], Statistic.TRIMMED_GEOMEAN)
    return out


def tau_interval(first: Mapping[str, Sequence[Observation]], second: Mapping[str, Sequence[Observation]],
                 stacks: Sequence[str], baseline: str, *, resamples: int = 2000, seed: int = 0,
                 confidence: float = CONFIDENCE) -> TauInterval | None:
    """Kendall's tau-b of two runs' rankings of `stacks` by ratio to `baseline`, with a bootstrap
    interval over each run's rounds (the runs are independent, so each is resampled on its own).

    The baseline counts as 1 in both. None unless every other stack has three launches in both
    runs: the rounds of one launch share its effect, so one launch's rounds resampled give a
    range of a few bootstrap outcomes, not a 95% interval (seed 000's columns had 9), and two
    launches resampled give three launch draws, half their spread (the own-launch rule of
    plan/interval_rule.py).
    """
    others = [s for s in stacks if s != baseline]
    if any(launches_of(side.get(s, ())) <= OWN_DF for side in (first, second) for s in others):
        return None
    centers = [[statistic_value(side[s]) or math.nan for s in others] for side in (first, second)]
    with_base = [list(c) + ([1.0] if baseline in stacks else []) for c in centers]
    center = kendall_tau_b(with_base[0], with_base[1])
    if center is None:
        return None
    rng = np.random.default_rng(seed)
    drawn = [_resampled_logs(side, others, resamples, rng) for side in (first, second)]
    if baseline in stacks:
        drawn = [np.hstack([d, np.zeros((resamples, 1))]) for d in drawn]
    taus = _tau_b_rows(drawn[0], drawn[1])
    taus = taus[~np.isnan(taus)]
    if taus.size == 0:
        return None
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(taus, [tail, 100.0 - tail])
    return TauInterval(center, float(low), float(high), int(taus.size))


@dataclass(frozen=True)
class Lesson:
    """Two configurations' rankings of the same stacks: how far they agree, what swaps, what is noise."""

    comparison: Comparison[str]
    """Its flips are the swapping pairs (see `clear_flips` for those outside the noise)."""
    tau: float | None
    interval: TauInterval | None
    first: tuple[Ranked, ...] = ()
    """The first configuration's ranking of the common stacks, best first (competition ranks)."""
    second: tuple[Ranked, ...] = ()

    @property
    def clear_flips(self) -> tuple[Flip, ...]:
        """Swaps outside the noise: both rows' intervals separate in both configurations. A row
        without an interval (one window) cannot show that, so its swaps never count here."""
        def known(*scores: Score) -> bool:
            return all(score.interval is not None for score in scores)

        return tuple(f for f in self.comparison.clear_flips
                     if known(f.ahead_first, f.behind_first, f.ahead_second, f.behind_second))

    @property
    def verdict(self) -> Verdict:
        """Seed 000's lesson, that the configuration decides the ranking, held to the noise:
        agrees with a swap outside it, tied when every swap is within it, differs with none."""
        if self.tau is None:
            return Verdict.NOT_MEASURED
        if self.clear_flips:
            return Verdict.AGREES
        return Verdict.TIED if self.comparison.flips else Verdict.DIFFERS


def lesson(first_rows: Sequence[Row], second_rows: Sequence[Row], stacks: Sequence[str], baseline: str,
           first_ratios: Mapping[str, Sequence[Observation]] | None = None,
           second_ratios: Mapping[str, Sequence[Observation]] | None = None, *,
           resamples: int = 2000, seed: int = 0) -> Lesson:
    """The rows' ratios to the baseline ranked in each configuration and compared (only `stacks`).

    A swap is outside the noise when the two rows' intervals to the baseline separate in both
    configurations: a conservative test (intervals to a common baseline overlap more easily
    than the pair's own ratio would), which is what a claim of a flip should pass.
    """
    def scores(rows: Sequence[Row]) -> dict[str, Score]:
        found: dict[str, Score] = {}
        for row in rows:
            if row.label in stacks and row.label not in found and row.ratio is not None:
                interval = (1.0, 1.0) if row.label == baseline else _interval_of(row)
                found[row.label] = Score(row.ratio, interval)
        return found

    one, two = scores(first_rows), scores(second_rows)
    comparison = compare({"first": one, "second": two}, "first", "second")
    interval = None
    if first_ratios is not None and second_ratios is not None:
        interval = tau_interval(first_ratios, second_ratios, comparison.stacks, baseline,
                                resamples=resamples, seed=seed)
    common = set(comparison.stacks)
    return Lesson(comparison, comparison.tau, interval,
                  rank({s: v for s, v in one.items() if s in common}),
                  rank({s: v for s, v in two.items() if s in common}))
