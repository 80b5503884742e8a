"""Simulated duet runs of known truth: the sparse design's intervals cover it (the full grid: scripts/coverage)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from pywebbench.analyze.coverage import Shape
from pywebbench.analyze.duet_coverage import DuetNoise, simulate_block_run, simulate_cell, simulate_run


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


def test_in_launch_blocks_each_block_is_a_launch_and_each_stack_has_one_per_cycle() -> None:
    quiet = DuetNoise(side_sd=0.0, launch_sd=0.0, run_sd=0.0, outlier_rate=0.0)
    logs, truth = simulate_block_run(Shape(3, 1, 26), 8, quiet, np.random.default_rng(2))
    assert logs.shape == (25, 3 * 4, 1)  # 25 stacks in blocks of at most 8: four launches a cycle
    present = ~np.isnan(logs[..., 0])
    assert (present.reshape(25, 3, 4).sum(axis=-1) == 1).all()
    assert np.allclose(np.where(present, logs[..., 0], truth[:, None]), truth[:, None])


def test_a_duet_in_launch_blocks_covers_95_percent() -> None:
    # Seed 003's size in blocks of 8 and the baseline, three launches of one round each: the
    # baseline's launch effect is drawn afresh in every block, and the intervals still hold.
    cell = simulate_cell(Shape(3, 1, 26), runs=200, seed=11, block=8)
    assert cell.intervals == 200 * 25
    assert cell.coverage is not None and 0.93 <= cell.coverage <= 0.97, cell


def test_the_method_page_renders_the_block_cells_and_says_before_they_exist(tmp_path: Path) -> None:
    from pywebbench.report.pages.coverage import blocks_section
    assert "No simulation of duet runs in launch blocks" in blocks_section(tmp_path)
    cells = [{"launches": n, "rounds": 1, "stacks": 127, "block": 15, "runs": 200, "intervals": 25200,
              "covered": covered, "without": 0, "median_half_width": 0.05} for n, covered in ((2, 23940), (3, 24192))]
    (tmp_path / "coverage").mkdir()
    noises = {"catalog": {"side_sd": 0.04}}
    (tmp_path / "coverage" / "duet-blocks.json").write_text(
        json.dumps({"schema": 2, "noises": noises, "cells": [{"noise": "catalog", **c} for c in cells]}))
    text = blocks_section(tmp_path)
    assert "| catalog, a side 4.0% | 127, blocks of 15 | 95.0% ±5% | 96.0% ±5% |" in text
    assert "2 of 2 cells cover between 93% and 97%" in text


def test_the_clustered_standard_error_counts_a_run_once_not_each_of_its_ratios() -> None:
    from pywebbench.analyze.duet_coverage import clustered_se
    counts = np.full(400, 25.0)
    independent = np.random.default_rng(3).binomial(25, 0.95, 400).astype(float)
    together = np.where(np.random.default_rng(4).random(400) < 0.95, 25.0, 0.0)  # a run covers all or none
    binomial = (0.95 * 0.05 / counts.sum()) ** 0.5
    se_independent, se_together = clustered_se(independent, counts), clustered_se(together, counts)
    assert se_independent is not None and se_together is not None
    assert 0.8 * binomial < se_independent < 1.2 * binomial
    assert se_together > 4 * binomial  # about sqrt(25) times: 400 draws, not 10,000
    assert clustered_se(np.array([1.0]), np.array([1.0])) is None


def test_a_cell_adds_runs_until_its_coverage_is_known_to_its_target() -> None:
    from pywebbench.analyze.duet_coverage import MAX_RATIOS, TARGET_SE
    shape = Shape(2, 2, 26)  # 25 ratios sharing a baseline: the first batch of 200 runs is far from enough
    first = simulate_cell(shape, runs=200, seed=1)
    assert first.se is not None and first.se > TARGET_SE
    cell = simulate_cell(shape, seed=1)
    assert cell.runs > 200 and cell.runs % 200 == 0
    assert cell.se is not None and (cell.se <= TARGET_SE or cell.runs * 25 >= MAX_RATIOS)


def test_a_reading_near_an_edge_of_the_band_is_settled_only_when_clear_of_it_or_fine() -> None:
    from pywebbench.analyze.duet_coverage import EDGE_SE, TARGET_SE, _settled
    assert not _settled(0.95, None) and not _settled(0.95, TARGET_SE * 1.5)  # not yet known to its target
    assert _settled(0.95, TARGET_SE)  # 2 points from either edge: clear
    assert not _settled(0.9715, 0.0033) and not _settled(0.9685, 0.0033)  # within 2 se of 97%, either side
    assert _settled(0.9630, 0.0033) and _settled(0.9715, EDGE_SE)  # clear of it, or fine enough to say which side


def test_a_cell_near_an_edge_goes_on_past_its_first_limit_in_whole_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    from pywebbench.analyze import duet_coverage
    shape = Shape(2, 2, 26)  # batches of 200 runs, 25 ratios each
    monkeypatch.setattr(duet_coverage, "TARGET_SE", 1.0)  # known to its target after the first batch
    monkeypatch.setattr(duet_coverage, "MAX_RATIOS", 200 * 25)  # ... which is also its first limit
    monkeypatch.setattr(duet_coverage, "EDGE_MAX_RATIOS", 600 * 25)
    monkeypatch.setattr(duet_coverage, "_settled", lambda share, se: False)  # always near an edge
    assert simulate_cell(shape, seed=2).runs == 600
