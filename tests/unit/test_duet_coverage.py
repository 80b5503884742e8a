"""Simulated duet runs of known truth: the sparse design's intervals cover it (the full grid: scripts/coverage)."""

from __future__ import annotations

import numpy as np

from pywebbench.analyze.coverage import Shape
from pywebbench.analyze.duet_coverage import DuetNoise, simulate_cell, simulate_run


def test_a_sparse_duet_of_fourteen_stacks_in_three_launches_covers_95_percent() -> None:
    cell = simulate_cell(Shape(3, 2, 14), runs=300, seed=7)
    assert cell.intervals == 300 * 13 and cell.without == 0
    assert cell.coverage is not None and 0.93 <= cell.coverage <= 0.97, cell
    assert cell.median_half_width is not None and cell.median_half_width < 0.08


def test_without_noise_each_round_recovers_the_truth_exactly() -> None:
    quiet = DuetNoise(side_sd=0.0, launch_sd=0.0, run_sd=0.0, outlier_rate=0.0)
    logs, truth = simulate_run(Shape(2, 2, 9), quiet, np.random.default_rng(1))
    assert logs.shape == (8, 2, 2)
    assert np.allclose(logs, truth[:, None, None])  # the host's speed is shared by both sides: it cancels
