"""The verdicts of a ranking's adjacent pairs judged as one family, its error rate controlled.

Each adjacent pair is one test of "different" (its ratio's two-sided t test against 1) and one
of "equivalent" (two one-sided tests against the ±margin, Schuirmann 1987). A table of 125
pairs tested each at 5% expects about six false "different"s where every pair is alike; so the
family's p-values are adjusted together (Benjamini-Hochberg by default: of the pairs called
different, at most 5% are expected wrongly so), and a pair is different or equivalent only
where its adjusted p-value is under the level. With one pair the adjustment does nothing: the
verdict is the one the 95% interval (different) and the 90% interval (equivalent) give.
The error rates this gives at the harness's shapes are simulated (analyze/verdict_errors.py).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

import numpy as np
from scipy.special import stdtr

from pywebbench.analyze.moderation import satterthwaite_df
from pywebbench.analyze.paired import Interval

LEVEL = 0.05
"""The family's error rate: false discoveries among 'different' calls (fdr), or the chance of any (holm)."""


FAR_APART = 0.10
"""A pair whose centres lie at least this far apart and whose 95% intervals do not overlap is
'different' whatever the family's adjustment left it (analyze/neighbours.far_apart): the catalog
left litestar:uvicorn 4.47 [4.31, 4.64] over flask:bjoern 3.88 [3.56, 4.23] unresolved among 125
pairs (its p 0.0057 against BH's 0.0012 there). Simulated with the family's control at the
committed shapes, the 'different' calls' false discovery rate stays at 2.2% or under in every cell
with it (2.4% or under without; analyze/verdict_errors.py, docs/method.md)."""


class FamilyControl(StrEnum):
    FDR = "fdr"
    """Benjamini-Hochberg: the expected share of wrong calls among those made at most LEVEL."""
    HOLM = "holm"
    """Holm's step-down: the chance of any wrong call in the family at most LEVEL."""
    NONE = "none"
    """Each pair at LEVEL on its own (the family's error rate grows with its size)."""


CONTROL = FamilyControl.FDR


@dataclass(frozen=True)
class PairTest:
    """log(a/b) with its standard error and degrees of freedom."""

    log_ratio: float
    se: float
    df: float
    through_baseline: bool = False
    """Judged through the two stacks' ratios to the baseline: they shared too few launches."""

    @classmethod
    def of(cls, interval: Interval) -> PairTest:
        return cls(math.log(interval.center), interval.se_log, interval.df)

    @classmethod
    def through(cls, a: Interval, b: Interval) -> PairTest:
        """a/b from a/base and b/base as if independent. Where they share launches the shared
        baseline windows correlate them positively, so the sum of variances overstates a/b's:
        the test is conservative, never overconfident."""
        own = (a.se_log ** 2, a.df), (b.se_log ** 2, b.df)
        return cls(math.log(a.center) - math.log(b.center), math.sqrt(own[0][0] + own[1][0]),
                   satterthwaite_df(*own), through_baseline=True)

    def _cdf(self, t: float) -> float:
        df = self.df if math.isfinite(self.df) else 1e9
        return float(stdtr(df, t))

    def p_different(self) -> float:
        if self.se <= 0:
            return 0.0 if self.log_ratio != 0 else 1.0
        return 2.0 * self._cdf(-abs(self.log_ratio) / self.se)

    def p_equivalent(self, margin: float) -> float:
        """The larger of the two one-sided p-values against log(1 + margin) either side."""
        bound = math.log1p(margin)
        if self.se <= 0:
            return 0.0 if abs(self.log_ratio) < bound else 1.0
        above_low = 1.0 - self._cdf((self.log_ratio + bound) / self.se)
        below_high = self._cdf((self.log_ratio - bound) / self.se)
        return max(above_low, below_high)


def adjusted(p_values: Sequence[float], control: FamilyControl = CONTROL) -> list[float]:
    """The family's p-values adjusted by `control` (compare each with LEVEL)."""
    p = np.asarray(p_values, dtype=float)
    m = p.size
    if m == 0 or control is FamilyControl.NONE:
        return [float(x) for x in p]
    order = np.argsort(p)
    ranked = p[order]
    if control is FamilyControl.HOLM:
        steps = np.maximum.accumulate(ranked * (m - np.arange(m)))
    else:  # Benjamini-Hochberg: the running minimum from the largest down
        steps = np.minimum.accumulate((ranked * m / np.arange(1, m + 1))[::-1])[::-1]
    out = np.empty(m)
    out[order] = np.minimum(steps, 1.0)
    return [float(x) for x in out]


def judge(tests: Sequence[PairTest | None], margin: float, control: FamilyControl = CONTROL,
          level: float = LEVEL) -> list[str | None]:
    """'different', 'equivalent', 'unresolved' per test (None where a pair has no test).

    The 'different' family and the 'equivalent' family are each adjusted over the pairs that
    have a test; a pair called different is not also called equivalent."""
    present = [i for i, t in enumerate(tests) if t is not None]
    tested = [t for t in tests if t is not None]
    different = adjusted([t.p_different() for t in tested], control)
    equivalent = adjusted([t.p_equivalent(margin) for t in tested], control)
    out: list[str | None] = [None] * len(tests)
    for slot, p_diff, p_equiv in zip(present, different, equivalent):
        out[slot] = "different" if p_diff < level else "equivalent" if p_equiv < level else "unresolved"
    return out


def rule(control: FamilyControl = CONTROL, level: float = LEVEL) -> str:
    """The sentence every table's readers need: how its verdicts were made."""
    family = {FamilyControl.FDR: f"held to a {level:.0%} false discovery rate (Benjamini-Hochberg)",
              FamilyControl.HOLM: f"held to a {level:.0%} chance of any wrong call (Holm)",
              FamilyControl.NONE: f"each at {level:.0%} on its own"}[control]
    return (f"The adjacent pairs of a table are one family of tests, {family}, for 'different' and "
            "for 'equivalent' alike; a pair that shared too few launches is judged through its two "
            f"ratios to the baseline; a pair at least {FAR_APART:.0%} apart whose 95% intervals do not overlap "
            "is different whatever the adjustment.")
