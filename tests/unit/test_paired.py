"""Paired ratios and intervals over launches against inputs whose answers are known."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.neighbours import rank_with_ties, tied
from pywebbench.analyze.paired import (
    Interval,
    Observation,
    Statistic,
    level_variances,
    min_detectable,
    paired_ratios,
    ratio_interval,
    rounds_needed,
    should_continue,
    statistic_value,
    unpaired_ratio_interval,
)


def _series(values: np.ndarray, launch_size: int = 1) -> list[Observation]:
    """Rounds in launches of `launch_size` (by default a launch per round)."""
    return [Observation(i // launch_size, i % launch_size, float(v)) for i, v in enumerate(values)]


def _flat(observations: list[Observation]) -> list[Observation]:
    """The same rounds as if each had been its own launch."""
    return [Observation(i, 0, o.value) for i, o in enumerate(observations)]


# 1. Known inputs

def test_constant_ratios_give_a_point_interval() -> None:
    interval = ratio_interval([Observation(r // 2, r % 2, 1.05) for r in range(10)])
    assert interval is not None
    assert interval.center == pytest.approx(1.05, rel=1e-12)
    assert [interval.low, interval.high] == pytest.approx([1.05, 1.05], rel=1e-12)
    assert interval.half_width == pytest.approx(0.0, abs=1e-12)
    assert interval.excludes_one and interval.n_rounds == 10 and interval.n_launches == 5
    assert ratio_interval([Observation(0, 0, 1.05)]) is None
    assert ratio_interval([Observation(0, r, 1.05) for r in range(10)]) is None  # one launch


def test_paired_ratios_match_launch_and_round_and_drop_the_rest() -> None:
    values = [Observation(0, 0, 110.0), Observation(0, 1, 90.0), Observation(1, 0, 120.0),
              Observation(1, 5, 50.0), Observation(0, 2, 0.0)]
    baseline = [Observation(0, 0, 100.0), Observation(0, 1, 100.0), Observation(1, 0, 100.0),
                Observation(1, 6, 50.0), Observation(0, 2, 100.0)]
    ratios = paired_ratios(values, baseline)
    assert [(o.launch, o.round) for o in ratios] == [(0, 0), (0, 1), (1, 0)]
    assert [o.value for o in ratios] == pytest.approx([1.1, 0.9, 1.2])
    with pytest.raises(ValueError, match="two observations"):
        paired_ratios([Observation(0, 0, 1.0), Observation(0, 0, 2.0)], baseline)


def test_statistics_on_a_hand_computed_example() -> None:
    ten = [Observation(0, r, v) for r, v in enumerate([1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 2.0, 64.0])]
    assert statistic_value(ten, Statistic.GEOMEAN) == pytest.approx(2 ** (14 / 10))  # log2s: 0, eight 1s, 6
    assert statistic_value(ten, Statistic.TRIMMED_GEOMEAN) == pytest.approx(2.0)  # 10%: drops 1 and 64
    assert statistic_value(ten, Statistic.MEDIAN) == pytest.approx(2.0)
    three = [Observation(0, r, v) for r, v in enumerate([1.0, 4.0, 2.0])]
    assert statistic_value(three, Statistic.GEOMEAN) == pytest.approx(2.0)
    assert statistic_value(three, Statistic.MEDIAN) == pytest.approx(2.0)
    assert statistic_value(three, Statistic.TRIMMED_GEOMEAN) == pytest.approx(2.0)  # n=3 trims nothing
    assert statistic_value([], Statistic.MEDIAN) is None


def test_interval_properties_and_projections() -> None:
    interval = Interval(center=1.0, low=0.96, high=1.04, n_rounds=40, n_launches=2, se_log=0.02)
    assert interval.half_width == pytest.approx(0.04)
    assert not interval.excludes_one
    assert rounds_needed(interval, 0.02) == 160
    assert rounds_needed(interval, 0.08) == 40  # never fewer than already spent
    # On two launches (1 df, t = 12.7) the width falls with t as launches are added, not only
    # as 1/sqrt(rounds): 1/sqrt alone would say 400 rounds.
    few = Interval(center=1.0, low=0.8, high=1.2, n_rounds=4, n_launches=2, se_log=0.2 / 12.706, df=1.0)
    assert 10 < rounds_needed(few, 0.02) < 40
    assert min_detectable(interval) == pytest.approx(math.exp((1.959964 + 0.841621) * 0.02) - 1, rel=1e-6)
    assert should_continue({"a": interval, "b": None, "c": Interval(1.0, 0.99, 1.01, 40, 2, 0.005)},
                           precision=0.02) == ("a", "b")


# 2. Drift: what pairing buys

def test_pairing_cancels_slow_drift_that_swamps_the_unpaired_interval() -> None:
    rng = np.random.default_rng(42)
    rounds = 60
    speed = 1.0 + 0.3 * np.sin(2 * np.pi * np.arange(rounds) / rounds)  # the machine, +-30%
    a = 1000.0 * speed * np.exp(rng.normal(0, 0.03, rounds))
    b = 950.0 * speed * np.exp(rng.normal(0, 0.03, rounds))  # truly 5% slower every round
    a_obs, b_obs = _series(a), _series(b)

    unpaired = unpaired_ratio_interval(b_obs, a_obs)
    paired = ratio_interval(paired_ratios(b_obs, a_obs))
    assert unpaired is not None and paired is not None
    assert unpaired.half_width > 0.05
    assert not unpaired.excludes_one
    assert paired.half_width < 0.02
    assert paired.excludes_one and paired.high < 1.0
    assert paired.center == pytest.approx(0.95, abs=0.015)


# 3. Launches

def _launched(offsets: list[float], rounds: int, seed: int) -> list[Observation]:
    rng = np.random.default_rng(seed)
    logs = np.concatenate([offset + rng.normal(0, 0.03, rounds) for offset in offsets])
    return _series(np.exp(logs), launch_size=rounds)


def test_launch_means_widen_for_a_launch_effect() -> None:
    with_effect = _launched([-0.04, 0.0, 0.04], 20, seed=1)
    nested, flat = ratio_interval(with_effect), ratio_interval(_flat(with_effect))
    assert nested is not None and flat is not None
    assert nested.n_launches == 3 and flat.n_launches == 60
    assert nested.half_width > 2 * flat.half_width
    assert nested.df == pytest.approx(2.0)


def test_intervals_over_launches_cover_the_true_ratio() -> None:
    rng = np.random.default_rng(11)
    for offsets in ([0.0, 0.0, 0.0, 0.0], [-0.02, 0.01, 0.02, -0.01]):
        covered = 0
        for _ in range(150):
            shift = rng.normal(0, np.std(offsets), 4) if any(offsets) else np.zeros(4)
            observations = [Observation(launch + 1, launch * 10 + r + 1,
                                        float(np.exp(np.log(0.95) + shift[launch] + rng.normal(0, 0.06))))
                            for launch in range(4) for r in range(10)]
            interval = ratio_interval(observations)
            assert interval is not None
            covered += interval.low <= 0.95 <= interval.high
        assert 0.88 <= covered / 150 <= 0.995, (offsets, covered)


def test_level_variances_find_where_the_variance_is() -> None:
    variances = level_variances(_launched([-0.04, 0.0, 0.04], 20, seed=1))
    assert variances is not None
    between, within = variances
    assert 0.0008 < between < 0.003  # offsets' own variance: 0.0016
    assert within == pytest.approx(0.03 ** 2, rel=0.35)
    assert level_variances(_launched([0.0, 0.0, 0.0], 20, seed=2)) is not None
    assert level_variances(_launched([0.0], 20, seed=2)) is None  # one launch: no between level


def test_launches_of_unequal_size() -> None:
    observations = _launched([-0.04, 0.0, 0.04], 20, seed=3)
    uneven = [o for o in observations if not (o.launch == 1 and o.round >= 5)]
    interval = ratio_interval(uneven)
    assert interval is not None and interval.n_rounds == 45 and interval.n_launches == 3
    assert interval.low < interval.center < interval.high
    assert level_variances(uneven) is not None


# 4. Power

def test_min_detectable_shrinks_as_one_over_sqrt_rounds() -> None:
    rng = np.random.default_rng(7)
    few = ratio_interval(_series(np.exp(rng.normal(0, 0.04, 20))))
    many = ratio_interval(_series(np.exp(rng.normal(0, 0.04, 80))))
    assert few is not None and many is not None
    assert 1.5 < min_detectable(few) / min_detectable(many) < 2.7


# 5. Coverage

def test_the_95_percent_interval_covers_a_known_ratio() -> None:
    rng = np.random.default_rng(11)
    truth = 0.97
    covered = 0
    for seed in range(200):
        ratios = _series(truth * np.exp(rng.normal(0, 0.05, 30)))
        interval = ratio_interval(ratios)
        assert interval is not None
        covered += interval.low <= truth <= interval.high
    assert 0.88 <= covered / 200 <= 0.99


# 6. Ranking

def test_rank_groups_tied_neighbours_by_their_own_paired_ratio() -> None:
    rng = np.random.default_rng(5)
    rounds = 30
    speed = 1.0 + 0.2 * np.sin(np.arange(rounds) / 5)  # shared drift, cancelled by pairing

    def stack(level: float) -> list[Observation]:
        return _series(level * speed * np.exp(rng.normal(0, 0.03, rounds)))

    a, b, c = stack(1000.0), stack(1000.0), stack(800.0)
    assert tied(a, b) is True
    assert tied(a, c) is False
    assert tied(a[:1], b[:1]) is None
    ranking = rank_with_ties([("C", c), ("A", a), ("B", b)])
    assert {label for label, group in ranking if group == ranking[0][1]} == {"A", "B"}
    assert ranking[2] == ("C", 2)
    lower_is_better = rank_with_ties([("C", c), ("A", a), ("B", b)], higher_is_better=False)
    assert lower_is_better[0] == ("C", 1) and {group for _, group in lower_is_better[1:]} == {2}
