"""Three answers for two stacks: different, equivalent within a margin (two one-sided tests), or
unresolved; and each ranked row's verdict against the next."""

from __future__ import annotations

import math

import numpy as np

from pywebbench.analyze.neighbours import PairVerdict, pair_verdict
from pywebbench.analyze.paired import Observation


def _launches(level: float, spreads: list[float]) -> list[Observation]:
    """One round per launch, each launch at level x exp(spread)."""
    return [Observation(i, 0, level * math.exp(s)) for i, s in enumerate(spreads)]


BASE = _launches(1000.0, [0.0] * 6)


def test_a_clear_gap_is_different() -> None:
    assert pair_verdict(_launches(1100.0, [0.01, -0.01, 0.0, 0.01, -0.01, 0.0]), BASE) is PairVerdict.DIFFERENT


def test_the_same_level_measured_tightly_is_equivalent_within_the_margin_and_not_within_a_tighter_one() -> None:
    same = _launches(1000.0, [0.004, -0.004, 0.002, -0.002, 0.003, -0.003])
    assert pair_verdict(same, BASE, margin=0.05) is PairVerdict.EQUIVALENT
    assert pair_verdict(same, BASE, margin=0.002) is PairVerdict.UNRESOLVED


def test_noise_wider_than_the_margin_is_unresolved() -> None:
    noisy = _launches(1000.0, [0.2, -0.2, 0.15, -0.15, 0.1, -0.1])
    assert pair_verdict(noisy, BASE, margin=0.05) is PairVerdict.UNRESOLVED


def test_one_launch_is_unresolved() -> None:
    one = [Observation(0, r, 1000.0 + r) for r in range(5)]
    assert pair_verdict(one, [Observation(0, r, 1000.0) for r in range(5)]) is PairVerdict.UNRESOLVED


def test_equal_stacks_are_rarely_called_different() -> None:
    """The 95% test calls two equal stacks different about 5% of the time, no more."""
    rng = np.random.default_rng(4)
    calls = [pair_verdict(_launches(1000.0, list(rng.normal(0, 0.05, 4))),
                          _launches(1000.0, list(rng.normal(0, 0.05, 4)))) for _ in range(800)]
    assert sum(v is PairVerdict.DIFFERENT for v in calls) / len(calls) <= 0.075
