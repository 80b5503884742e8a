"""What a budget buys, said before the run: launches enough for an interval, or what would be."""

from __future__ import annotations

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.budgeting import (
    affordable,
    budget_for,
    fit_to_budget,
    ratios_in_table,
    refuse_small_budget,
    windows_per_round,
)
from pywebbench.plan.options import RunOptions


def test_a_budget_of_two_rounds_becomes_two_launches_of_one_round() -> None:
    options = RunOptions(budget_s=270.0, duration_s=4.0, settle_s=0.25, rounds_per_launch=2)
    # 14 windows a round: about 71 s; a launch of 14 stacks about 56 s: 2 rounds, 1 or 2 launches.
    asked = affordable(options, 14, 14, 2)
    assert asked.launches == 1 and not asked.enough
    fitted, line = fit_to_budget(options, 14, 14)
    assert fitted.rounds_per_launch == 1
    assert "2 launch(es)" in line and "one round per launch" in line


def test_a_budget_too_small_for_two_launches_says_which_would_do() -> None:
    options = RunOptions(budget_s=60.0, duration_s=4.0, settle_s=0.25)
    fitted, line = fit_to_budget(options, 14, 14)
    assert "no ratio interval can be printed" in line
    need = budget_for(options, 14, 14, 2, 1)
    assert f"--budget {int(-(-need // 60))}m" in line and "needs 2 launches;" in line
    assert affordable(fitted, 14, 14, 1).launches < 2


def test_without_a_budget_the_asked_rounds_decide() -> None:
    enough, line = fit_to_budget(RunOptions(repeats=6, rounds_per_launch=2), 3, 3)
    assert "3 launch(es)" in line and enough.rounds_per_launch == 2
    _, short = fit_to_budget(RunOptions(repeats=2, rounds_per_launch=2), 5, 5)
    assert "add --repeats 4" in short


def test_a_table_too_small_to_pool_needs_three_launches() -> None:
    """Two or three stacks hold one or two ratios: nothing to lend, so two launches are 1 df."""
    _, two = fit_to_budget(RunOptions(repeats=4, rounds_per_launch=2), 3, 3)
    assert "needs 3 launches (too few stacks to pool their spreads)" in two
    assert "add --repeats 6" in two
    options = RunOptions(budget_s=120.0, duration_s=2.0, settle_s=0.25)
    _, line = fit_to_budget(options, 3, 3)
    need = budget_for(options, 3, 3, 3, 1)
    assert affordable(options, 3, 3, 1).needed == 3
    assert ("no ratio interval" not in line) == (need <= 120.0)
    # A gate of two servers: four versions, two ratios (each head to its own base).
    assert ratios_in_table({"a:x#base", "a:x#head", "a:y#base", "a:y#head"}, {"a:x", "a:y"}) == 2
    assert ratios_in_table({"a", "b", "c", "d"}, {"a", "b", "c", "d"}) == 3


def test_the_budget_a_sweep_needs_counts_every_point() -> None:
    options = RunOptions(budget_s=60.0, duration_s=4.0, settle_s=0.25)
    _, one = fit_to_budget(options, 14, 14, points=1)
    _, two = fit_to_budget(options, 14, 14, points=2)
    need_one = int(one.split("--budget ")[1].split("m")[0])
    need_two = int(two.split("--budget ")[1].split("m")[0])
    assert need_two >= 2 * need_one - 1


def test_a_duet_round_is_one_window_per_pair_it_loads() -> None:
    # 3 stacks x 2 workloads: 3 pairs x 2 workloads, each pair's two sides in one window.
    assert windows_per_round("duet", 6, 3) == 6
    assert windows_per_round("interleaved", 6, 3) == 6
    assert windows_per_round("duet", 5, 5) == 10  # every pair up to five stacks
    assert windows_per_round("duet", 14, 14) == 28  # two cycles beyond: 2k, not the 91 pairs


def test_windows_of_a_request_count_say_the_estimate_is_a_floor() -> None:
    _, line = fit_to_budget(RunOptions(budget_s=600.0, requests=5000, generator="ab"), 22, 22)
    assert "run to a request count" in line
    _, timed = fit_to_budget(RunOptions(budget_s=600.0), 22, 22)
    assert "request count" not in timed


def test_calibrate_s_budget_counts_its_sizing_at_the_rounds_per_launch_it_takes() -> None:
    """The sizing phase caps its rounds per launch at 2: asking for 4 does not make it cheaper."""
    said = []
    for per in (2, 4):
        with pytest.raises(UserError) as refused:
            refuse_small_budget(RunOptions(budget_s=30.0, rounds_per_launch=per), sizing_rounds=8)
        said.append(str(refused.value))
    assert said[0] == said[1] and "sizing phase takes about" in said[0]


def test_a_figure_resting_on_one_ratio_needs_three_launches_whatever_the_table_holds() -> None:
    """calibrate's B against its probe P: four variants would pool (two launches), one ratio cannot."""
    options = RunOptions(repeats=4, rounds_per_launch=2)
    _, pooled = fit_to_budget(options, 4, 4, ratios=3)
    _, own = fit_to_budget(options, 4, 4, ratios=1)
    assert "needs 2 launches" in pooled and "needs 3 launches" in own
