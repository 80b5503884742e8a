"""run --precision's stop: where the rule ends a simulated run, and what its looks cost the
intervals' coverage (simulated with known truth)."""

from __future__ import annotations

import math

import numpy as np

from pywebbench.analyze.coverage import Shape
from pywebbench.analyze.duet import with_duet_term
from pywebbench.analyze.paired import Interval
from pywebbench.analyze.stopping import (duet_intervals, first_look, interleaved_intervals, rounds_at_stop, simulated,
                                         stop_cell, truncated)


def test_truncated_keeps_each_runs_first_rounds_counted_launch_by_launch() -> None:
    logs = np.ones((2, 1, 3, 2))  # two runs, one ratio, three launches of two rounds
    kept = truncated(logs, np.array([3, 6]))
    assert (~np.isnan(kept[0, 0])).tolist() == [[True, True], [True, False], [False, False]]
    assert not np.isnan(kept[1]).any()


def test_the_rule_stops_at_the_first_look_where_every_ratio_is_narrow_enough() -> None:
    rng = np.random.default_rng(3)
    steady = rng.normal(0.0, 0.001, (1, 5, 6, 2))
    noisy = steady.copy()
    noisy[0, 0] = rng.normal(0.0, 0.3, (6, 2))  # one ratio never within ±2%
    stop = rounds_at_stop(np.concatenate([steady, noisy]), interleaved_intervals, 4, 0.02)
    # Five ratios lend each other their spreads, so two launches (the first look) already give
    # narrow intervals to the steady run.
    assert stop[0] == 4
    assert stop[1] == 12  # one wide ratio keeps the whole run going to its last round


def test_duet_intervals_are_the_reports_widened_ones() -> None:
    rng = np.random.default_rng(4)
    logs = rng.normal(0.05, 0.01, (1, 6, 4, 2))
    centre, half = duet_intervals(logs)
    _, plain = interleaved_intervals(logs)
    assert np.all(half > plain)
    # One ratio's interval rebuilt the report's way from its plain t interval.
    from pywebbench.analyze.moderation import moderated_intervals
    bounds, _, _ = moderated_intervals(logs)
    i = (0, 0)
    own = Interval(math.exp(bounds.centre[i]), math.exp(bounds.centre[i] - bounds.half[i]),
                   math.exp(bounds.centre[i] + bounds.half[i]), 2, 4, float(bounds.se[i]), float(bounds.df[i]))
    widened = with_duet_term(own)
    assert widened is not None
    assert math.isclose(math.log(widened.high) - centre[i], half[i], rel_tol=1e-9)


def test_the_stop_keeps_interleaved_coverage_near_95_percent() -> None:
    shape = Shape(8, 2, 5)
    logs, truth = simulated("interleaved", shape, 400, seed=7)
    cell = stop_cell("interleaved", shape, logs, truth, 4, 0.10)
    assert cell.coverage is not None and 0.91 <= cell.coverage <= 0.99, cell.coverage
    assert 0 < cell.stopped_early < cell.runs  # the rule decided some runs' length, not none or all


def test_the_first_look_waits_for_three_launches_only_under_the_rule() -> None:
    assert first_look(2, 1, 0.02) == 3 and first_look(6, 2, 0.02) == 6 and first_look(4, 2, 0.05) == 6
    assert first_look(2, 1, None) == 2  # no rule: the planned rounds
