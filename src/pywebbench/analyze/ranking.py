"""Where rankings flip: per-configuration rankings and, for each pair of configurations, how far
they agree (Kendall's tau) and which stack pairs swap places.

Input is, for each configuration (a sweep's GridPoint, its label, or any hashable key), a
mapping stack -> score, higher is better (req/s). A score may carry an interval (a bootstrap
CI, or min..max over repeats); a flip whose two stacks' intervals overlap in either
configuration is flagged as possibly a tie within noise rather than a real reversal. A score
without an interval counts as the single point [value, value], so it is "within noise" of
another stack only if it falls inside that stack's interval.

Pure functions over frozen values; nothing here prints.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

from pywebbench.core.errors import UserError

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class Score:
    value: float
    interval: tuple[float, float] | None = None
    """(low, high), e.g. analyze.Row.rps_ci; None when there is no estimate of the noise."""
    tie_group: int | None = None
    """Paired methods: rows of one point with the same group are tied by their own paired
    ratio, which decides instead of overlapping intervals."""

    @property
    def low(self) -> float:
        return self.interval[0] if self.interval is not None else self.value

    @property
    def high(self) -> float:
        return self.interval[1] if self.interval is not None else self.value

    def overlaps(self, other: Score) -> bool:
        if self.tie_group is not None and other.tie_group is not None:
            return self.tie_group == other.tie_group
        return self.low <= other.high and other.low <= self.high


ScoreLike = float | Score
Scores = Mapping[str, ScoreLike]


@dataclass(frozen=True)
class Ranked:
    stack: str
    rank: int
    """1 is best; equal scores share a rank and the next rank is skipped (1, 2, 2, 4)."""
    score: Score


@dataclass(frozen=True)
class Ranking(Generic[K]):
    config: K
    ranked: tuple[Ranked, ...]

    @property
    def order(self) -> tuple[str, ...]:
        return tuple(r.stack for r in self.ranked)


@dataclass(frozen=True)
class Flip:
    """`ahead` beat `behind` in the first configuration; in the second, `behind` beats `ahead`."""

    ahead: str
    behind: str
    ahead_first: Score
    behind_first: Score
    ahead_second: Score
    behind_second: Score
    noise_first: bool
    """The two stacks' intervals overlap in the first configuration."""
    noise_second: bool

    @property
    def within_noise(self) -> bool:
        """Possibly a tie within noise on at least one side, not a clear reversal."""
        return self.noise_first or self.noise_second


@dataclass(frozen=True)
class Comparison(Generic[K]):
    first: K
    second: K
    stacks: tuple[str, ...]
    """Stacks scored in both configurations; only these are compared."""
    only_first: tuple[str, ...]
    only_second: tuple[str, ...]
    tau: float | None
    """Kendall's tau-b over the common stacks; None with fewer than two, or when one side is all ties."""
    flips: tuple[Flip, ...]
    """Every discordant stack pair, in the first configuration's ranking order."""

    @property
    def swaps(self) -> int:
        """Discordant stack pairs (pairs tied on either side count as neither)."""
        return len(self.flips)

    @property
    def clear_flips(self) -> tuple[Flip, ...]:
        return tuple(f for f in self.flips if not f.within_noise)


@dataclass(frozen=True)
class FlipReport(Generic[K]):
    rankings: tuple[Ranking[K], ...]
    comparisons: tuple[Comparison[K], ...]
    """One per unordered pair of configurations, in input order."""

    @property
    def flipping(self) -> tuple[Comparison[K], ...]:
        """The pairs of configurations whose rankings disagree somewhere."""
        return tuple(c for c in self.comparisons if c.flips)


def as_score(stack: str, score: ScoreLike) -> Score:
    result = score if isinstance(score, Score) else Score(float(score))
    numbers = (result.value, *(result.interval or ()))
    if not all(math.isfinite(n) for n in numbers):
        raise UserError(f"score of {stack} is not a finite number: {score!r}")
    if result.interval is not None and result.interval[0] > result.interval[1]:
        raise UserError(f"interval of {stack} has its low end above its high end: {result.interval}")
    return result


def _normalized(scores: Scores) -> dict[str, Score]:
    return {stack: as_score(stack, score) for stack, score in scores.items()}


def rank(scores: Scores) -> tuple[Ranked, ...]:
    """Stacks best first (ties by name, for a stable order), with competition ranks."""
    normal = _normalized(scores)
    ordered = sorted(normal.items(), key=lambda item: (-item[1].value, item[0]))
    values = [s.value for _, s in ordered]
    return tuple(Ranked(stack, values.index(s.value) + 1, s) for stack, s in ordered)


def ranking(config: K, scores: Scores) -> Ranking[K]:
    return Ranking(config, rank(scores))


def compare(config_scores: Mapping[K, Scores], first: K, second: K) -> Comparison[K]:
    """How the ranking under `first` maps onto the ranking under `second`."""
    one, two = _normalized(config_scores[first]), _normalized(config_scores[second])
    # First configuration's order, so flips read top-down as its ranking does.
    common = tuple(r.stack for r in rank({s: v for s, v in one.items() if s in two}))
    flips: list[Flip] = []
    for ahead, behind in itertools.combinations(common, 2):
        # `common` is best first under `first`, so `ahead` leads there or ties with `behind`.
        if one[ahead].value > one[behind].value and two[ahead].value < two[behind].value:
            flips.append(Flip(
                ahead=ahead, behind=behind,
                ahead_first=one[ahead], behind_first=one[behind],
                ahead_second=two[ahead], behind_second=two[behind],
                noise_first=one[ahead].overlaps(one[behind]),
                noise_second=two[ahead].overlaps(two[behind]),
            ))
    return Comparison(
        first=first,
        second=second,
        stacks=common,
        only_first=tuple(s for s in one if s not in two),
        only_second=tuple(s for s in two if s not in one),
        tau=_tau([one[s].value for s in common], [two[s].value for s in common]),
        flips=tuple(flips),
    )


def _tau(xs: list[float], ys: list[float]) -> float | None:
    # scipy returns nan (with a warning) for these; None says "undefined" without one.
    if len(xs) < 2 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    # Imported here: scipy.stats takes seconds to import, which `pywebbench list` should not pay.
    from scipy.stats import kendalltau

    tau = float(kendalltau(xs, ys).statistic)
    return None if math.isnan(tau) else tau


def flip_report(config_scores: Mapping[K, Scores]) -> FlipReport[K]:
    """Every configuration's ranking, and every pair of configurations compared."""
    configs = tuple(config_scores)
    return FlipReport(
        rankings=tuple(ranking(c, config_scores[c]) for c in configs),
        comparisons=tuple(compare(config_scores, a, b) for a, b in itertools.combinations(configs, 2)),
    )
