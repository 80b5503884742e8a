import math
import random

import pytest

from pywebbench.core.errors import UserError
from pywebbench.analyze.ranking import Score, compare, flip_report, rank
from pywebbench.plan.sweep import grid, parse_knobs

FOUR = {"a": 400.0, "b": 300.0, "c": 200.0, "d": 100.0}


def test_identical_order_is_tau_one_without_flips() -> None:
    # Different numbers, same order: rankings agree completely.
    result = compare({"x": FOUR, "y": {s: v * 3 for s, v in FOUR.items()}}, "x", "y")
    assert result.tau == pytest.approx(1.0)
    assert result.flips == () and result.swaps == 0
    assert result.stacks == ("a", "b", "c", "d")


def test_reversed_order_is_tau_minus_one_and_every_pair_flips() -> None:
    reversed_scores = {"a": 100.0, "b": 200.0, "c": 300.0, "d": 400.0}
    result = compare({"x": FOUR, "y": reversed_scores}, "x", "y")
    assert result.tau == pytest.approx(-1.0)
    n = 4
    assert result.swaps == n * (n - 1) // 2
    # Read top-down in the first configuration's order; `ahead` is who led there.
    assert [(f.ahead, f.behind) for f in result.flips] == [
        ("a", "b"), ("a", "c"), ("a", "d"), ("b", "c"), ("b", "d"), ("c", "d")]
    first = result.flips[0]
    assert (first.ahead_first.value, first.behind_first.value) == (400.0, 300.0)
    assert (first.ahead_second.value, first.behind_second.value) == (100.0, 200.0)


def test_one_adjacent_swap_has_the_textbook_tau() -> None:
    swapped = {"a": 400.0, "b": 200.0, "c": 300.0, "d": 100.0}
    result = compare({"x": FOUR, "y": swapped}, "x", "y")
    # 6 pairs, 5 concordant and 1 discordant: (5 - 1) / 6.
    assert result.tau == pytest.approx(2 / 3)
    assert result.swaps == 1
    (flip,) = result.flips
    assert (flip.ahead, flip.behind) == ("b", "c")
    assert not flip.within_noise  # no intervals given: points never overlap unless equal


def test_stacks_missing_from_one_configuration_are_ignored() -> None:
    first = {**FOUR, "only-here": 1000.0}
    second = {"a": 400.0, "b": 300.0, "c": 200.0, "d": 100.0, "only-there": 1.0}
    result = compare({"x": first, "y": second}, "x", "y")
    assert result.stacks == ("a", "b", "c", "d")
    assert result.only_first == ("only-here",) and result.only_second == ("only-there",)
    assert result.tau == pytest.approx(1.0) and result.flips == ()


def test_ties_are_neither_concordant_nor_a_flip() -> None:
    result = compare({"x": {"a": 2.0, "b": 1.0, "c": 0.5}, "y": {"a": 1.0, "b": 1.0, "c": 0.5}}, "x", "y")
    assert result.flips == ()
    assert result.tau is not None and 0 < result.tau < 1  # tau-b: ties shrink it below 1


def test_tau_is_undefined_when_too_few_stacks_or_all_tied() -> None:
    assert compare({"x": {"a": 1.0}, "y": {"a": 2.0, "b": 1.0}}, "x", "y").tau is None
    assert compare({"x": {"a": 1.0, "b": 1.0}, "y": {"a": 2.0, "b": 1.0}}, "x", "y").tau is None
    assert compare({"x": {}, "y": {}}, "x", "y").stacks == ()


def test_overlapping_intervals_flag_a_flip_as_noise() -> None:
    scores = {
        # a and b overlap in x, c and d do not.
        "x": {"a": Score(110, (100, 120)), "b": Score(105, (95, 115)), "c": Score(50, (48, 52)),
              "d": Score(40, (38, 42))},
        # Both pairs reverse; only c/d overlap here.
        "y": {"a": Score(80, (78, 82)), "b": Score(100, (98, 102)), "c": Score(45, (40, 50)),
              "d": Score(47, (44, 50))},
    }
    result = compare(scores, "x", "y")
    flips = {(f.ahead, f.behind): f for f in result.flips}
    assert set(flips) == {("a", "b"), ("c", "d")}
    assert flips["a", "b"].noise_first and not flips["a", "b"].noise_second
    assert not flips["c", "d"].noise_first and flips["c", "d"].noise_second
    assert all(f.within_noise for f in result.flips)
    assert result.clear_flips == ()


def test_a_clear_flip_has_separate_intervals_on_both_sides() -> None:
    scores = {"x": {"a": Score(200, (190, 210)), "b": Score(100, (95, 105))},
              "y": {"a": Score(100, (95, 105)), "b": Score(200, (190, 210))}}
    result = compare(scores, "x", "y")
    assert result.clear_flips == result.flips and result.swaps == 1


def test_a_point_inside_the_other_interval_is_noise() -> None:
    scores = {"x": {"a": Score(110, (90, 130)), "b": 100.0}, "y": {"a": 50.0, "b": 100.0}}
    (flip,) = compare(scores, "x", "y").flips
    assert flip.noise_first and not flip.noise_second


def test_ranking_is_best_first_with_shared_ranks_for_ties() -> None:
    ranked = rank({"slow": 10.0, "fast": 300.0, "tie-b": 50.0, "tie-a": 50.0})
    assert [(r.stack, r.rank) for r in ranked] == [("fast", 1), ("tie-a", 2), ("tie-b", 2), ("slow", 4)]
    assert ranked[0].score == Score(300.0)
    assert rank({}) == ()


def test_bad_scores_are_user_errors() -> None:
    with pytest.raises(UserError, match="not a finite number"):
        rank({"a": math.nan})
    with pytest.raises(UserError, match="low end above its high end"):
        rank({"a": Score(1.0, (2.0, 0.5))})


def test_report_over_a_sweep_grid() -> None:
    # Seed 000's story in miniature: few connections favour sync, many favour async.
    points = grid(parse_knobs(["connections=10,100,1000"]))
    sync, gevent, uvicorn = "flask:gunicorn-sync", "flask:gunicorn-gevent", "starlette:uvicorn"
    scores = {
        points[0]: {sync: 900.0, gevent: 700.0, uvicorn: 650.0},
        points[1]: {sync: 800.0, gevent: 820.0, uvicorn: 700.0},
        points[2]: {sync: 300.0, gevent: 900.0, uvicorn: 1500.0},
    }
    report = flip_report(scores)
    assert [r.config for r in report.rankings] == list(points)
    assert report.rankings[2].order == (uvicorn, gevent, sync)
    pairs = [(c.first.label, c.second.label, c.swaps) for c in report.comparisons]
    assert pairs == [("connections=10", "connections=100", 1),
                     ("connections=10", "connections=1000", 3),
                     ("connections=100", "connections=1000", 2)]
    assert report.comparisons[1].tau == pytest.approx(-1.0)
    assert report.flipping == report.comparisons
    assert flip_report({"only": FOUR}).comparisons == ()


def test_tau_and_swaps_agree_on_random_orders() -> None:
    # Without ties, tau = (concordant - discordant) / pairs, so it follows from the flip count.
    rng = random.Random(7)
    stacks = [f"s{i}" for i in range(7)]
    pairs = len(stacks) * (len(stacks) - 1) // 2
    for _ in range(30):
        first = dict(zip(stacks, rng.sample(range(100), len(stacks)), strict=True))
        second = dict(zip(stacks, rng.sample(range(100), len(stacks)), strict=True))
        result = compare({"x": first, "y": second}, "x", "y")
        assert result.tau == pytest.approx(1 - 2 * result.swaps / pairs)
        for flip in result.flips:
            assert first[flip.ahead] > first[flip.behind] and second[flip.ahead] < second[flip.behind]
