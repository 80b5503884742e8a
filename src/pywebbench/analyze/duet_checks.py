"""The duet checked against what it did not fit (issue 46, item 5).

A duet round loads every pair of its stacks and fits one level per stack (analyze/duet.py): it
assumes a pair's log ratio is the difference of the two levels, whoever else is measured. Two
checks read committed runs against that assumption and against the run term, which was fitted
only from pairs of one stack with itself (DUET_RUN_SD):

- **Transitivity.** Within a round, A/B . B/C against A/C is the fit's residual; the same pair
  measured again in other rounds gives the window noise with no fit at all. The ratio of the two
  variances is an F statistic: near 1 when the pairs compose, far above it when a stack's ratio
  depends on its partner (a server that takes the shared CPUs differently from each neighbour).
- **Across runs.** The same stacks' ratios to the same baseline in two runs: the common shift (the
  baseline's own offset between the runs, the one thing every ratio shares) and, with it removed,
  whether the stacks' positions agree within their intervals (RMS z near 1). The shift, less its
  own error, is a run term estimated from pairs of dissimilar stacks.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from scipy.stats import f as f_distribution

from pywebbench.analyze.duet import PairSide, pairs_by_round, round_levels
from pywebbench.analyze.paired import Interval

LEADS = 3
"""Stacks named as carrying most of the residual."""


@dataclass(frozen=True)
class Transitivity:
    residual_sd: float
    """RMS of the windows' log ratios around their round's fitted levels."""
    residual_df: int
    replicate_sd: float
    """The same pair's log ratios around their own mean over the rounds that measured it."""
    replicate_df: int
    leads: tuple[tuple[str, float], ...]
    """The stacks whose windows' residuals are largest (RMS), largest first."""

    @property
    def f(self) -> float:
        return (self.residual_sd / self.replicate_sd) ** 2 if self.replicate_sd > 0 else math.inf

    @property
    def p(self) -> float:
        """One-sided: the chance of an F this large if the pairs composed."""
        return float(f_distribution.sf(self.f, self.residual_df, self.replicate_df))


def transitivity(sides: Sequence[PairSide]) -> Transitivity | None:
    """The residual against the replicate noise over one cell's duet windows; None where the run
    has no round with a residual or no pair measured twice."""
    squares, df = 0.0, 0
    by_stack: dict[str, list[float]] = defaultdict(list)
    repeats: dict[tuple[str, str], list[float]] = defaultdict(list)
    for complete in pairs_by_round(sides).values():
        stacks = {name for values in complete for name in values}
        levels = round_levels(complete, min(stacks)) if stacks else {}
        fitted = len(levels) == len(stacks) and len(complete) >= len(stacks)
        for values in complete:
            (a, va), (b, vb) = sorted(values.items())
            ratio = math.log(va / vb)
            repeats[(a, b)].append(ratio)
            if fitted:
                residual = ratio - (levels[a] - levels[b])
                squares += residual ** 2
                by_stack[a].append(residual)
                by_stack[b].append(residual)
        if fitted:
            df += len(complete) - (len(stacks) - 1)
    spread, spread_df = 0.0, 0
    for ratios in repeats.values():
        mean = sum(ratios) / len(ratios)
        spread += sum((r - mean) ** 2 for r in ratios)
        spread_df += len(ratios) - 1
    if df == 0 or spread_df == 0:
        return None
    rms = {name: math.sqrt(sum(r * r for r in rs) / len(rs)) for name, rs in by_stack.items()}
    leads = tuple(sorted(rms.items(), key=lambda item: -item[1])[:LEADS])
    return Transitivity(math.sqrt(squares / df), df, math.sqrt(spread / spread_df), spread_df, leads)


@dataclass(frozen=True)
class CrossRun:
    stacks: int
    shift: float
    """exp of the weighted mean log difference, less 1: how far run A's baseline sat from B's."""
    shift_se: float
    """Its standard error (of the log), from the stacks' own intervals."""
    rms_z: float
    """Of each stack's log difference over its two intervals' error, the shift left in."""
    rms_z_centred: float
    """The same with the shift removed (on stacks - 1 degrees of freedom)."""
    beyond: int
    """Stacks whose centred |z| exceeds 1.96 (about 5% of them if the intervals are honest)."""

    @property
    def run_sd(self) -> float:
        """The run term the shift implies per run: sqrt((shift^2 - se^2) / 2), floored at 0."""
        log_shift = math.log1p(self.shift)
        return math.sqrt(max(0.0, (log_shift ** 2 - self.shift_se ** 2) / 2))


def cross_run(a: Mapping[str, Interval], b: Mapping[str, Interval]) -> CrossRun | None:
    """Two runs' ratios to one baseline, stack by stack; None with fewer than 3 stacks in common."""
    pairs = [(math.log(a[s].center) - math.log(b[s].center), math.hypot(a[s].se_log, b[s].se_log))
             for s in sorted(set(a) & set(b)) if a[s].se_log > 0 and b[s].se_log > 0]
    if len(pairs) < 3:
        return None
    weights = [1 / se ** 2 for _, se in pairs]
    shift = sum(d * w for (d, _), w in zip(pairs, weights)) / sum(weights)
    raw = [d / se for d, se in pairs]
    centred = [(d - shift) / se for d, se in pairs]
    return CrossRun(
        stacks=len(pairs), shift=math.expm1(shift), shift_se=math.sqrt(1 / sum(weights)),
        rms_z=math.sqrt(sum(z * z for z in raw) / len(raw)),
        rms_z_centred=math.sqrt(sum(z * z for z in centred) / (len(centred) - 1)),
        beyond=sum(abs(z) > 1.96 for z in centred))
