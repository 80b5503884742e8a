"""Kendall's tau's bootstrap interval over 3-4 launches, its coverage simulated, and said on the page."""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.analyze import tau_coverage
from pywebbench.analyze.tau_coverage import seed000_shape, simulate
from pywebbench.report.pages.seeds.seed000 import tau_coverage_note


def test_rankings_far_apart_against_their_noise_are_held_every_time() -> None:
    first = {f"s{i}": 0.5 * (i + 1) for i in range(6)}
    second = {f"s{i}": 0.5 * ((i * 5) % 6 + 1) for i in range(6)}  # another order, none tied with the baseline
    cell = simulate(first, second, 0.001, 0.001, 3, runs=10, resamples=200)
    assert cell.intervals == 10 and cell.covered == 10 and cell.median_width == 0.0


def test_at_seed_000_s_shape_three_launches_fall_far_short_of_95_percent() -> None:
    """The committed columns' rankings as truth (neighbours of Better Sync a fraction of its noise
    apart): the tau of noisy ranks is pulled towards 0 and 3 launches resampled are narrower than
    their spread."""
    first, second, sd_first, sd_second = seed000_shape(Path(__file__).parents[2] / "docs" / "results")
    assert len(first) == len(second) == 21 and 0.01 < sd_first < sd_second < 0.1
    cell = simulate(first, second, sd_first, sd_second, 3, runs=30, resamples=200, seed=2)
    assert cell.intervals == 30 and cell.coverage is not None and cell.coverage < 0.8


def test_the_page_says_it_beside_the_tau(tmp_path: Path) -> None:
    assert tau_coverage.load(tmp_path) is None and tau_coverage_note(tmp_path) == ""
    (tmp_path / "coverage").mkdir()
    cells = [{"launches": 3, "rounds_per_launch": 1, "coverage": 0.5}, {"launches": 4, "rounds_per_launch": 1,
                                                                        "coverage": 0.72}]
    (tmp_path / "coverage" / "tau.json").write_text(json.dumps({"cells": cells}))
    note = tau_coverage_note(tmp_path)
    assert "holds the true tau 50% at 3 launches, 72% at 4 launches" in note and "not a 95% interval" in note
