"""Neighbours in a ranking: tie groups, and what each pair is (different, equivalent, unresolved).

Two rows are compared by their own paired ratio, round by round (what the pairing cancels stays
cancelled), on the interval paired.ratio_interval gives, borrowing the table's own-part spread
unless the pair's own spread is outlying; rows that shared too few launches, through their ratios
to the baseline. A table's pairs are judged as one family (analyze/verdict_family.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum

from pywebbench.analyze.moderation import NO_PRIOR, Prior, launch_means, spread_outlying, spreads
from pywebbench.analyze.paired import (
    CONFIDENCE,
    Interval,
    Observation,
    launch_array,
    launch_centre,
    paired_ratios,
    ratio_interval,
)
from pywebbench.analyze.verdict_family import CONTROL, FAR_APART, FamilyControl, PairTest, judge


def pair_prior(prior: Prior) -> Prior:
    """The prior for a ratio between two stacks of a table: two own parts' spread, no baseline share."""
    return Prior(2.0 * prior.variance, prior.df, prior.stacks) if prior.df > 0 else NO_PRIOR


def tied(
    a: Sequence[Observation], b: Sequence[Observation], *, prior: Prior = NO_PRIOR,
    confidence: float = CONFIDENCE,
) -> bool | None:
    """Whether the paired a/b interval contains 1; None when there is no interval.

    `prior`: the table's own-part prior (table_intervals); a/b holds two stacks' own parts and
    no baseline share, so it borrows their doubled spread.
    """
    interval = ratio_interval(paired_ratios(a, b), prior=pair_prior(prior), confidence=confidence)
    return None if interval is None else not interval.excludes_one


EQUIVALENCE = 0.05
"""The default margin of `--equivalence`: neighbours within ±5% of each other count as equal."""


def far_apart(above: Interval | None, below: Interval | None) -> bool:
    """Whether the upper row's interval lies wholly above the lower's and its centre FAR_APART or
    more above (a row without an interval, the baseline's point 1 aside, is never far apart)."""
    if above is None or below is None:
        return False
    return above.center >= (1.0 + FAR_APART) * below.center and above.low > below.high


BASELINE_POINT = Interval(1.0, 1.0, 1.0, 0, 0, 0.0)
"""The baseline's own ratio: exactly 1, no interval of its own."""


class PairVerdict(StrEnum):
    """What a run says of two stacks: three answers, so that 'tied' no longer covers both."""

    DIFFERENT = "different"
    """Their paired ratio's 95% interval excludes 1."""
    EQUIVALENT = "equivalent"
    """Two one-sided tests at 5% each: the 90% interval lies within the margin (Schuirmann 1987)."""
    UNRESOLVED = "unresolved"
    """Neither: more rounds or launches would tell."""


def pair_lent(ratios: Sequence[Observation], prior: Prior) -> Prior:
    """The spread a pair borrows: the table's doubled own-part spread, unless the pair's own
    launches spread improbably wide for it (a noisy stack in the pair keeps its own spread, as
    moderation.moderated_intervals lets an outlying stack keep its own)."""
    lent = pair_prior(prior)
    if lent.df <= 0 or not ratios:
        return lent
    variance, df = spreads(launch_means(launch_array([ratios])))
    own, own_df = float(variance[0]), float(df[0])
    if bool(spread_outlying(own, own_df, lent.variance, lent.df)):
        return NO_PRIOR
    return lent


def pair_test(a: Sequence[Observation], b: Sequence[Observation], *, prior: Prior = NO_PRIOR,
              through: tuple[Interval | None, Interval | None] = (None, None)) -> PairTest | None:
    """a/b from their own paired ratio, or, where they shared too few launches for one,
    through their intervals to the baseline (`through`); None where neither exists."""
    ratios = paired_ratios(a, b)
    interval = ratio_interval(ratios, prior=pair_lent(ratios, prior))
    if interval is not None:
        return PairTest.of(interval)
    first, second = through
    return PairTest.through(first, second) if first is not None and second is not None else None


def pair_verdict(a: Sequence[Observation], b: Sequence[Observation], *, prior: Prior = NO_PRIOR,
                 margin: float = EQUIVALENCE, confidence: float = CONFIDENCE) -> PairVerdict:
    """a against b alone (a family of one): different, equivalent within ±margin, or unresolved."""
    test = pair_test(a, b, prior=prior)
    if test is None:
        return PairVerdict.UNRESOLVED
    (said,) = judge([test], margin, FamilyControl.NONE, level=1.0 - confidence)
    return PairVerdict(said or PairVerdict.UNRESOLVED)


def rank_with_verdicts(
    items: Sequence[tuple[str, Sequence[Observation]]], *, higher_is_better: bool = True,
    prior: Prior = NO_PRIOR, margin: float = EQUIVALENCE, confidence: float = CONFIDENCE,
    intervals: Mapping[str, Interval | None] | None = None, control: FamilyControl = CONTROL,
    baseline: str | None = None,
) -> list[tuple[str, int, PairVerdict | None]]:
    """Labels best first, each with a tie group (from 1) and its verdict against the next row.

    Adjacent neighbours are compared by their own paired ratio (overlapping intervals against a
    baseline would hide the pairing), or, where they shared too few launches, through their
    `intervals` to the baseline; the pairs' tests are judged as one family (verdict_family.py),
    and a pair far apart by its `intervals` (the `baseline` row at its point 1) is different.
    A row joins the previous row's group unless its pair was called different. Rows without a
    value come last, each in a group of its own, with no verdict.
    """
    scored = [(label, obs, launch_centre(obs)) for label, obs in items]
    sign = -1.0 if higher_is_better else 1.0
    ranked = sorted(scored, key=lambda row: (row[2] is None, sign * (row[2] or 0.0)))
    known = intervals or {}
    placed = {**known, **({baseline: BASELINE_POINT} if baseline is not None else {})}
    tests: list[PairTest | None] = []
    far: list[bool] = []
    for (label, obs, value), (below, below_obs, below_value) in zip(ranked, ranked[1:]):
        tests.append(pair_test(obs, below_obs, prior=prior, through=(known.get(label), known.get(below)))
                     if value is not None and below_value is not None else None)
        upper, lower = (label, below) if higher_is_better else (below, label)
        far.append(far_apart(placed.get(upper), placed.get(lower)))
    judged = judge(tests, margin, control, level=1.0 - confidence)
    verdicts = [PairVerdict.DIFFERENT.value if said is not None and is_far else said
                for said, is_far in zip(judged, far)]
    out: list[tuple[str, int, PairVerdict | None]] = []
    group = 0
    for index, (label, _obs, _value) in enumerate(ranked):
        above = verdicts[index - 1] if index > 0 else None
        group += 0 if above is not None and above != PairVerdict.DIFFERENT else 1
        said = verdicts[index] if index < len(verdicts) else None
        out.append((label, group, PairVerdict(said) if said is not None else None))
    return out


def rank_with_ties(
    items: Sequence[tuple[str, Sequence[Observation]]], *,
    higher_is_better: bool = True, prior: Prior = NO_PRIOR, confidence: float = CONFIDENCE,
) -> list[tuple[str, int]]:
    """Labels best first, each with its tie group (rank_with_verdicts without the verdicts)."""
    return [(label, group) for label, group, _ in rank_with_verdicts(
        items, higher_is_better=higher_is_better, prior=prior, confidence=confidence)]
