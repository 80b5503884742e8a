"""The adjacent pairs of a ranking judged as one family: p-values that match the intervals, the
family's adjustment, pairs that shared no launch judged through the baseline, and a noisy pair
that keeps its own spread."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.moderation import Prior, outlying_quantile
from pywebbench.analyze.neighbours import PairVerdict, pair_lent, pair_prior, pair_test, rank_with_verdicts
from pywebbench.analyze.paired import Observation, paired_ratios, ratio_interval, table_intervals
from pywebbench.analyze.verdict_errors import SHAPES, Design, simulate
from pywebbench.analyze.verdict_family import FamilyControl, PairTest, adjusted, judge, rule


def _launches(level: float, spreads: list[float], first: int = 0) -> list[Observation]:
    return [Observation(first + i, 0, level * math.exp(s)) for i, s in enumerate(spreads)]


def test_the_p_values_agree_with_the_intervals_they_replace() -> None:
    rng = np.random.default_rng(3)
    for _ in range(50):
        ratios = _launches(1.0 + rng.normal(0, 0.05), list(rng.normal(0, 0.03, 4)))
        test = PairTest.of(ratio_interval(ratios) or pytest.fail("an interval"))
        assert (test.p_different() < 0.05) == ratio_interval(ratios).excludes_one  # type: ignore[union-attr]
        ninety = ratio_interval(ratios, confidence=0.90)
        assert ninety is not None and (test.p_equivalent(0.05) < 0.05) == ninety.within(0.05)


def test_holm_and_benjamini_hochberg_adjust_as_published() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # Holm: sorted 0.005 0.01 0.03 0.04 times 4 3 2 1, running maximum
    assert adjusted(p, FamilyControl.HOLM) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: sorted times 4/1 4/2 4/3 4/4 = 0.02 0.02 0.04 0.04, running minimum from the top
    assert adjusted(p, FamilyControl.FDR) == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert adjusted(p, FamilyControl.NONE) == p
    assert adjusted([], FamilyControl.FDR) == []


def test_a_family_of_many_pairs_needs_more_than_one_pair_s_five_percent() -> None:
    alone = PairTest(0.05, 0.02, 30.0)  # p about 0.018: different on its own
    assert judge([alone], 0.05) == ["different"]
    assert judge([alone, *[PairTest(0.0, 0.02, 30.0)] * 9], 0.05)[0] == "unresolved"
    assert judge([alone, None], 0.05, FamilyControl.NONE) == ["different", None]
    assert "false discovery rate" in rule() and "Holm" in rule(FamilyControl.HOLM)


def test_stacks_that_shared_no_launch_are_judged_through_the_baseline() -> None:
    """Launch blocks: a in launches 0-2, b in 3-5, each paired with the baseline in its own."""
    rng = np.random.default_rng(8)
    a = _launches(1.5, list(rng.normal(0, 0.02, 3)))
    b = _launches(1.0, list(rng.normal(0, 0.02, 3)), first=3)
    assert paired_ratios(a, b) == ()
    intervals, prior = table_intervals({"a": a, "b": b})
    test = pair_test(a, b, prior=prior, through=(intervals["a"], intervals["b"]))
    assert test is not None and test.through_baseline and test.log_ratio == pytest.approx(
        math.log(intervals["a"].center / intervals["b"].center))  # type: ignore[union-attr]
    base = [("base", [Observation(i, 0, 1.0) for i in range(6)])]
    ranked = rank_with_verdicts([*base, ("a", a), ("b", b)], intervals=intervals)
    assert [label for label, _, _ in ranked] == ["a", "base", "b"]
    assert rank_with_verdicts([("a", a), ("b", b)], intervals=intervals)[0][2] is PairVerdict.DIFFERENT
    assert rank_with_verdicts([("a", a), ("b", b)])[0][2] is None  # without the intervals: no way to judge


def test_through_the_baseline_is_never_narrower_than_its_parts() -> None:
    a = ratio_interval(_launches(1.2, [0.01, -0.02, 0.015, 0.0]))
    b = ratio_interval(_launches(1.0, [0.03, -0.01, 0.0, -0.02]))
    assert a is not None and b is not None
    test = PairTest.through(a, b)
    assert test.se >= max(a.se_log, b.se_log) and test.df >= min(a.df, b.df)


def test_a_pair_spreading_far_wider_than_its_table_keeps_its_own_spread() -> None:
    prior = Prior(0.0001, 50.0, 20)  # a quiet table: 1% launch spread
    quiet = paired_ratios(_launches(1.0, [0.01, -0.01, 0.005]), _launches(1.0, [0.0] * 3))
    noisy = paired_ratios(_launches(1.0, [0.2, -0.2, 0.1]), _launches(1.0, [0.0] * 3))
    assert pair_lent(quiet, prior) == pair_prior(prior)
    assert pair_lent(noisy, prior).df == 0


def test_the_outlier_test_is_made_at_a_lower_quantile_on_few_launches() -> None:
    assert list(outlying_quantile(np.array([1, 2, 3, 5, 6, 7, 40]))) == [0.99, 0.90, 0.90, 0.95, 0.95, 0.99, 0.99]


def test_the_simulated_family_keeps_its_false_discovery_rate_at_the_default_run_s_shape() -> None:
    shape = SHAPES["default run (14 stacks, 4 launches of 2 rounds)"]
    errors = simulate(shape, "default", runs=120, seed=2)
    assert errors.control == "fdr" and errors.different_calls > 0.5
    assert errors.different_fdr <= 0.05 + 0.03  # 120 runs: within sampling error of the level


def test_the_adaptive_rule_s_repeated_looks_keep_the_family_s_rate_at_the_default_run_s_shape() -> None:
    # Stacks leave once placed, looked at before every launch: the calls are made where the rule
    # stopped, a selection the complete design does not have
    shape = SHAPES["default run (14 stacks, 4 launches of 2 rounds)"]
    errors = simulate(shape, "default", runs=120, seed=2, design=Design.ADAPTIVE)
    assert errors.design == "adaptive" and errors.different_calls > 0.5
    assert errors.different_fdr <= 0.05 + 0.03
