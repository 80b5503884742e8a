"""The adjacent pairs of a ranking judged as one family: p-values that match the intervals, the
family's adjustment, pairs that shared no launch judged through the baseline, and a noisy pair
that keeps its own spread."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.moderation import Prior, outlying_quantile
from pywebbench.analyze.neighbours import (
    BASELINE_POINT, PairVerdict, far_apart, pair_lent, pair_prior, pair_test, rank_with_verdicts,
)
from pywebbench.analyze.paired import Interval, Observation, paired_ratios, ratio_interval, table_intervals
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


def test_a_pair_far_apart_is_different_whatever_the_family_s_adjustment() -> None:
    """The catalog's litestar:uvicorn over flask:bjoern: p 0.0057 through the baseline, which BH does
    not pass among 125 pairs; 15% apart with intervals that do not overlap, it is different."""
    upper, lower = Interval(4.47, 4.31, 4.64, 3, 3, 0.016, 8.0), Interval(3.88, 3.56, 4.23, 3, 3, 0.037, 8.0)
    assert far_apart(upper, lower) and not far_apart(lower, upper)
    assert not far_apart(upper, Interval(4.10, 3.90, 4.30, 3, 3, 0.02, 8.0))  # 9% apart: the family decides
    assert not far_apart(upper, Interval(3.90, 3.50, 4.35, 3, 3, 0.05, 8.0))  # the intervals overlap
    assert far_apart(Interval(1.2, 1.12, 1.3, 3, 3, 0.03, 8.0), BASELINE_POINT) and not far_apart(upper, None)
    # The family's adjustment alone leaves a clear pair unresolved among many alike ones...
    assert judge([PairTest(0.17, 0.05, 4.0), *[PairTest(0.001, 0.05, 4.0)] * 9], 0.05)[0] == "unresolved"


def test_the_ranking_applies_the_far_apart_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two stacks in separate launches, 12% apart, through the baseline among 30 alike stacks:
    the family leaves the pair unresolved; far apart by its intervals, it is different."""
    import pywebbench.analyze.neighbours as neighbours

    rng = np.random.default_rng(1)  # a draw where the family leaves the pair unresolved (most do not)
    sets = {"a": _launches(1.12, list(rng.normal(0, 0.015, 3))),
            "b": _launches(1.0, list(rng.normal(0, 0.015, 3)), first=3)}
    sets |= {f"s{i}": _launches(0.5 * 0.9995 ** i, list(rng.normal(0, 0.015, 3)), first=6) for i in range(30)}
    intervals, prior = table_intervals(sets)
    def verdict() -> PairVerdict | None:
        ranked = rank_with_verdicts(list(sets.items()), prior=prior, intervals=intervals)
        return next(v for label, _, v in ranked if label == "a")
    assert far_apart(intervals["a"], intervals["b"])
    assert verdict() is PairVerdict.DIFFERENT
    monkeypatch.setattr(neighbours, "FAR_APART", 10.0)
    assert verdict() is PairVerdict.UNRESOLVED


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
