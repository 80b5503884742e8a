"""The baseline estimated from all its windows (analyze/baseline_all.py), on data of known truth."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.baseline_all import (
    cell_means,
    fit,
    moderated_spreads,
    table_intervals_all,
    two_way,
    window_array,
)
from pywebbench.analyze.baseline_all_coverage import Design, score_both, simulate
from pywebbench.analyze.coverage import Noise
from pywebbench.analyze.moderation import moderated_intervals
from pywebbench.analyze.paired import Observation, paired_ratios, table_intervals


def _sets(logs: np.ndarray, labels: list[str]) -> dict[str, list[Observation]]:
    """(stack, launch, round) logs as each stack's windows, NaN left out."""
    return {label: [Observation(l, r, math.exp(logs[s, l, r])) for l in range(logs.shape[1])
                    for r in range(logs.shape[2]) if not math.isnan(logs[s, l, r])]
            for s, label in enumerate(labels)}


def test_recovers_the_ratio_in_launch_blocks_whatever_the_launch_and_round_effects() -> None:
    rng = np.random.default_rng(3)
    mu = np.array([0.0, 0.5, -0.2, 1.1, 0.3])
    launch = rng.normal(0.0, 0.3, 6)
    machine = rng.normal(0.0, 0.2, (6, 2))
    logs = mu[:, None, None] + launch[None, :, None] + machine[None] + rng.normal(0.0, 1e-4, (5, 6, 2))
    held = np.zeros((5, 6), dtype=bool)
    held[0] = True  # the baseline in every launch; the others two launches each, in blocks of two
    for s, launches in {1: (0, 2), 2: (0, 3), 3: (1, 4), 4: (1, 5)}.items():
        held[s, launches] = True
    held[3, 4] = held[2, 2] = True
    logs = np.where(held[..., None], logs, np.nan)
    bounds = fit(logs)
    assert np.allclose(bounds.centre, mu[1:] - mu[0], atol=1e-3)
    labels = ["base", "a", "b", "c", "d"]
    intervals = table_intervals_all(_sets(logs, labels), "base")
    assert set(intervals) == {"a", "b", "c", "d"}
    for label, truth in zip(labels[1:], mu[1:]):
        interval = intervals[label]
        assert interval is not None and interval.low < math.exp(truth) < interval.high
        assert interval.center == pytest.approx(math.exp(truth), rel=1e-3)


def test_the_variance_of_a_complete_two_by_three_table_by_hand() -> None:
    # Three stacks in two launches of one round: the fit is the paired mean, its weights 1/L
    # on the stack's cells and the baseline's, and each row's residual df sum(1 - 1/2 - 1/3 + 1/6).
    means = np.array([[1.0, 1.4], [2.0, 2.2], [0.5, 1.5]])
    table = two_way(means)
    assert table.centre == pytest.approx([(2.0 - 1.0 + 2.2 - 1.4) / 2, (0.5 - 1.0 + 1.5 - 1.4) / 2])
    assert table.weights == pytest.approx(np.array([[0.5, 0.5, 0.0], [0.5, 0.0, 0.5]]))
    assert table.own_df == pytest.approx([2 / 3] * 3)
    # Residuals with L = 2: r[s, 1] = -r[s, 2] = (d_s - mean d) / 2, d_s = m[s, 1] - m[s, 2].
    d = means[:, 0] - means[:, 1]
    residual = (d - d.mean()) / 2
    assert table.own_var == pytest.approx(2 * residual ** 2 / (2 / 3))


def test_a_complete_table_keeps_the_paired_centre() -> None:
    rng = np.random.default_rng(5)
    logs = rng.normal(0.0, 0.05, (6, 3, 2)) + np.arange(6)[:, None, None] * 0.1
    assert np.allclose(fit(logs).centre, np.mean(logs[1:] - logs[:1], axis=(1, 2)))


def test_a_missing_window_does_not_move_a_launch_mean_by_its_round_speed() -> None:
    logs = np.array([[[0.0, 1.0]], [[0.3, 1.3]], [[0.6, np.nan]]])  # round 2 ran 1.0 faster
    assert cell_means(logs)[:, 0] == pytest.approx([0.5, 0.8, 1.1])


def test_rounds_line_up_by_number_not_by_order() -> None:
    sets = [[Observation(1, 1, 1.0), Observation(1, 2, 2.0)], [Observation(1, 2, 4.0)]]
    logs = window_array(sets)
    assert np.isnan(logs[1, 0, 0]) and logs[1, 0, 1] == pytest.approx(math.log(4.0))


def test_fewer_than_three_ratios_keep_the_paired_intervals() -> None:
    rng = np.random.default_rng(1)
    logs = rng.normal(0.0, 0.05, (3, 4, 2))
    sets = _sets(logs, ["base", "a", "b"])
    paired, _ = table_intervals({label: paired_ratios(sets[label], sets["base"]) for label in ("a", "b")})
    assert table_intervals_all(sets, "base") == paired


def test_a_baseline_far_noisier_than_its_table_gets_the_paired_intervals() -> None:
    rng = np.random.default_rng(2)
    logs = rng.normal(0.0, 0.01, (12, 4, 2))
    logs[0] += rng.normal(0.0, 0.2, (4, 1))  # the baseline's launches swing 20%
    paired, _, _ = moderated_intervals(logs[1:] - logs[:1])
    assert np.allclose(fit(logs).half, paired.half, equal_nan=True)


def test_blocks_hold_each_stack_once_a_cycle_and_the_baseline_always() -> None:
    design = Design("t", 10, 3, 1, 4)
    logs, truth = simulate(design, Noise(), 2, np.random.default_rng(0))
    assert logs.shape == (2, 10, 9, 1) and truth.shape == (2, 9)
    held = ~np.isnan(logs[..., 0])
    assert held[:, 0].all()
    assert (held[:, 1:].reshape(2, 9, 3, 3).sum(axis=-1) == 1).all()
    assert design.windows(3) == 3 * (9 + 3)


def test_simulated_coverage_is_near_nominal_at_a_small_block_design() -> None:
    design = Design("t", 20, 4, 1, 6)
    logs, truth = simulate(design, Noise(), 150, np.random.default_rng(4))
    new, paired = score_both(logs, truth)
    assert 0.92 <= new.covered / new.intervals <= 0.98
    assert new.median_half_width is not None and paired.median_half_width is not None
    assert new.median_half_width < paired.median_half_width


def test_a_noisy_baseline_in_launch_blocks_keeps_its_own_spread_on_its_own_launches() -> None:
    design = Design("t", 31, 4, 1, 5)
    logs, _ = simulate(design, Noise(noisy_share=0.0, outlier_rate=0.0, baseline_factor=4.0), 1,
                       np.random.default_rng(6))
    table = two_way(cell_means(logs[0]))
    assert table.own_df[0] > 3 * 6 - 1  # the baseline's own launches: one per block, 24 of them
    bounds = fit(logs[0])
    others = moderated_spreads(table.own_var, table.own_df)
    assert others[2]  # the baseline's spread is its own
    expected = table.weights @ np.nan_to_num(others[0])
    assert np.allclose(bounds.se ** 2, expected)
    assert others[0][0] == pytest.approx(table.own_var[0])
