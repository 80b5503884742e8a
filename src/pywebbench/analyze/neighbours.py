"""Neighbours in a ranking: tie groups, and what each pair is (different, equivalent, unresolved).

Two rows are compared by their own paired ratio, round by round (what the pairing cancels stays
cancelled), on the interval paired.ratio_interval gives, borrowing the table's own-part spread.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum

from pywebbench.analyze.moderation import NO_PRIOR, Prior
from pywebbench.analyze.paired import CONFIDENCE, Observation, launch_centre, paired_ratios, ratio_interval


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


class PairVerdict(StrEnum):
    """What a run says of two stacks: three answers, so that 'tied' no longer covers both."""

    DIFFERENT = "different"
    """Their paired ratio's 95% interval excludes 1."""
    EQUIVALENT = "equivalent"
    """Two one-sided tests at 5% each: the 90% interval lies within the margin (Schuirmann 1987)."""
    UNRESOLVED = "unresolved"
    """Neither: more rounds or launches would tell."""


def pair_verdict(a: Sequence[Observation], b: Sequence[Observation], *, prior: Prior = NO_PRIOR,
                 margin: float = EQUIVALENCE, confidence: float = CONFIDENCE) -> PairVerdict:
    """a against b from their own paired ratio: different, equivalent within ±margin, or unresolved."""
    ratios = paired_ratios(a, b)
    lent = pair_prior(prior)
    interval = ratio_interval(ratios, prior=lent, confidence=confidence)
    if interval is not None and interval.excludes_one:
        return PairVerdict.DIFFERENT
    # Two one-sided tests, each at 1 - confidence: the (2 x confidence - 1) interval inside the margin.
    tost = ratio_interval(ratios, prior=lent, confidence=2.0 * confidence - 1.0)
    if tost is not None and tost.within(margin):
        return PairVerdict.EQUIVALENT
    return PairVerdict.UNRESOLVED


def rank_with_verdicts(
    items: Sequence[tuple[str, Sequence[Observation]]], *, higher_is_better: bool = True,
    prior: Prior = NO_PRIOR, margin: float = EQUIVALENCE, confidence: float = CONFIDENCE,
) -> list[tuple[str, int, PairVerdict | None]]:
    """Labels best first, each with a tie group (from 1) and its verdict against the next row.

    A row joins the previous row's group unless their own paired ratio tells them apart
    (adjacent neighbours only: overlapping intervals against a baseline would hide the
    pairing); no interval tells nothing apart. Rows without a value come last, each in a group
    of its own, with no verdict.
    """
    scored = [(label, obs, launch_centre(obs)) for label, obs in items]
    sign = -1.0 if higher_is_better else 1.0
    ranked = sorted(scored, key=lambda row: (row[2] is None, sign * (row[2] or 0.0)))
    out: list[tuple[str, int, PairVerdict | None]] = []
    group = 0
    previous: Sequence[Observation] | None = None
    for label, obs, value in ranked:
        verdict = (pair_verdict(previous, obs, prior=prior, margin=margin, confidence=confidence)
                   if previous is not None and value is not None else None)
        if out and verdict is not None:
            out[-1] = (*out[-1][:2], verdict)  # the verdict belongs to the row above, against this one
        group += 0 if verdict is not None and verdict is not PairVerdict.DIFFERENT else 1
        out.append((label, group, None))
        previous = obs if value is not None else None
    return out


def rank_with_ties(
    items: Sequence[tuple[str, Sequence[Observation]]], *,
    higher_is_better: bool = True, prior: Prior = NO_PRIOR, confidence: float = CONFIDENCE,
) -> list[tuple[str, int]]:
    """Labels best first, each with its tie group (rank_with_verdicts without the verdicts)."""
    return [(label, group) for label, group, _ in rank_with_verdicts(
        items, higher_is_better=higher_is_better, prior=prior, confidence=confidence)]
