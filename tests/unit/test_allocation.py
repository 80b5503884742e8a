"""Adaptive allocation: which windows a run under --allocation adaptive measures, what it costs
the intervals' coverage (simulated with known truth), and the option's refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.allocation import placed, retire, settled, simulate_retiring
from pywebbench.analyze.coverage import Shape
from pywebbench.analyze.stats import half_width
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions


def test_a_settled_stack_takes_no_windows_after_the_launch_that_found_it_settled() -> None:
    rng = np.random.default_rng(1)
    launches, rounds = 6, 2
    noisy = rng.normal(0.0, 0.2, (launches, rounds))
    steady = [rng.normal(level, 0.001, (launches, rounds)) for level in (0.0, 0.1)]
    # The two noisy ratios cancel in each launch's common part (the baseline's share), so the
    # steady ones' intervals are their own spread's.
    logs = np.stack([steady[0], noisy, steady[1], -noisy])
    kept = retire(logs, 2, precision=0.02)
    for row in (0, 2):
        assert not np.isnan(kept[row, :2]).any()  # the pilot is measured whatever it shows
        assert np.isnan(kept[row, 4:]).all()  # settled by the fourth launch at the latest
    assert not np.isnan(kept[1]).any() and not np.isnan(kept[3]).any()


def test_settled_reads_the_half_width_as_the_report_does() -> None:
    half = np.array([math.log1p(0.019), math.log1p(0.021), np.nan, np.inf])
    assert settled(half, 0.02).tolist() == [True, False, False, False]
    edge = math.log1p(0.02)  # stats.half_width of exp(+-edge) is exactly 0.02: both read it alike
    assert half_width((math.exp(-edge), math.exp(edge)), 1.0) == pytest.approx(0.02)
    assert settled(np.array([edge * (1 - 1e-9), edge * (1 + 1e-6)]), 0.02).tolist() == [True, False]


def test_retiring_keeps_coverage_and_spends_the_saved_windows_on_more_launches() -> None:
    cell = simulate_retiring(Shape(8, 2, 14), 0.10, runs=300, seed=5)
    coverage = cell.covered / cell.intervals
    assert 0.92 <= coverage <= 0.98, coverage
    assert cell.launches_used > 8  # the windows the even design spends buy more launches for the open stacks
    assert cell.intervals == cell.runs * 13


def test_adaptive_allocation_needs_the_interleaved_method_and_a_stopping_rule() -> None:
    with pytest.raises(UserError, match="give it a --budget"):
        RunOptions(allocation="adaptive").validate()
    with pytest.raises(UserError, match="needs --method interleaved"):
        RunOptions(allocation="adaptive", precision=0.02, method="duet").validate()
    with pytest.raises(UserError, match="--allocation must be one of"):
        RunOptions(allocation="sometimes").validate()
    RunOptions(allocation="adaptive", precision=0.02).validate()
    RunOptions(allocation="adaptive", budget_s=300.0).validate()


def test_placed_finds_the_simulated_stacks_resolved_against_both_neighbours() -> None:
    rng = np.random.default_rng(2)
    truth = np.array([0.5, 0.2, 0.23, -0.4])  # two stacks 3% apart: neither told apart nor equal yet
    logs = truth[:, None, None] + rng.normal(0.0, 0.05, (4, 4, 2))
    assert placed(logs).tolist() == [True, False, False, True]
