"""Intervals over launches, moderated across a table's stacks, against answers known by hand and
by simulation (the full grid is scripts/coverage; these cells keep CI fast)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import stdtrit

from pywebbench.analyze.coverage import Noise, Shape, simulate_cell, simulate_logs
from pywebbench.analyze.moderation import Prior, estimate_priors, launch_effects, launch_intervals, moderated_intervals
from pywebbench.analyze.paired import Observation, ratio_interval, table_intervals, why_no_interval
from pywebbench.analyze.pairing import Paired, moderated_table
from pywebbench.plan.interval_rule import launches_needed, why_none


def _obs(launch_rounds: list[list[float]]) -> list[Observation]:
    return [Observation(l, r, v) for l, rounds in enumerate(launch_rounds) for r, v in enumerate(rounds)]


def test_three_launch_means_give_students_t_on_two_degrees_of_freedom() -> None:
    # Launch means of the logs: 0.0, 0.1, 0.2 (each launch's two rounds average to it).
    logs = [[-0.05, 0.05], [0.05, 0.15], [0.25, 0.15]]
    interval = ratio_interval(_obs([[math.exp(v) for v in launch] for launch in logs]))
    assert interval is not None
    se = 0.1 / math.sqrt(3)
    assert interval.center == pytest.approx(math.exp(0.1))
    assert interval.se_log == pytest.approx(se)
    assert interval.df == pytest.approx(2.0)
    assert math.log(interval.high) - 0.1 == pytest.approx(stdtrit(2, 0.975) * se)
    assert (interval.n_launches, interval.n_rounds) == (3, 6)


def test_one_launch_gives_no_interval_and_says_why() -> None:
    ratios = _obs([[1.0, 1.1, 0.9, 1.05]])
    assert ratio_interval(ratios) is None
    assert why_no_interval(ratios) == "needs 3 launches"
    assert why_no_interval(ratios, lent=True) == "needs 2 launches"
    assert why_none(0, lent=True) == "no paired rounds"


def test_two_launches_on_their_own_give_no_interval_on_one_degree_of_freedom() -> None:
    """Nothing lent (a table of one or two ratios): t on one df (12.7) is no interval to print."""
    ratios = _obs([[1.0], [1.2]])
    assert ratio_interval(ratios) is None
    assert why_no_interval(ratios) == "needs 3 launches"
    assert why_no_interval(_obs([[1.0], [1.2], [1.1]])) is None
    # A lent spread gives two launches their interval, as the coverage grid shows.
    assert ratio_interval(ratios, prior=Prior(0.01, 40.0, 14)) is not None
    # An outlying stack of a lending table keeps its own two launches: it needs a third.
    assert why_none(2, lent=True) == "needs 3 launches"
    assert [launches_needed(n) for n in (1, 2, 3, 13)] == [3, 3, 2, 2]


def test_a_prior_does_not_give_one_launch_an_interval() -> None:
    """One launch cannot show whether the stack is one of the table's noisy ones."""
    assert ratio_interval(_obs([[1.0, 1.1]]), prior=Prior(0.01, 40.0, 14)) is None


def test_two_launches_with_a_lent_spread_are_not_a_min_max_range() -> None:
    """The old bootstrap of two values gave [min, max]; the table's spread on its df gives t."""
    prior = Prior(0.0004, 20.0, 14)
    interval = ratio_interval(_obs([[1.0], [1.2]]), prior=prior)
    assert interval is not None
    own = math.log(1.2) ** 2 / 2  # variance of two launch means
    se = math.sqrt((20.0 * 0.0004 + own) / 21.0 / 2)
    assert interval.df == pytest.approx(21.0)
    assert math.log(interval.high / interval.center) == pytest.approx(stdtrit(21.0, 0.975) * se, rel=1e-6)


def test_a_table_lends_degrees_of_freedom_to_each_stack_and_keeps_a_noisy_one_wide() -> None:
    rng = np.random.default_rng(3)
    sets: dict[str, list[Observation]] = {}
    for s in range(14):
        sd = 0.25 if s == 0 else 0.03
        sets[f"s{s}"] = [Observation(l, r, math.exp(rng.normal(0.0, sd))) for l in range(3) for r in range(3)]
    moderated, prior = table_intervals(sets)
    plain = {label: ratio_interval(obs) for label, obs in sets.items()}
    assert prior.df > 0
    quiet = [label for label in sets if label != "s0"]
    # more than their own three launches give, but for the few a 90% outlier test flags by chance
    # (on two own degrees of freedom it is made at 0.90: moderation.OUTLYING_BY_DF)
    assert sum(moderated[label].df > 2.0 for label in quiet) >= len(quiet) - 3  # type: ignore[union-attr]
    # The quiet stacks' widths pulled together: their own launches alone scatter them.
    mine = [moderated[label].half_width for label in quiet]  # type: ignore[union-attr]
    own = [plain[label].half_width for label in quiet]  # type: ignore[union-attr]
    assert max(mine) / min(mine) < max(own) / min(own) / 2
    assert moderated["s0"].half_width > max(moderated[label].half_width for label in quiet)  # type: ignore[union-attr]


def test_alike_spreads_lend_all_their_degrees_of_freedom_unlike_ones_few() -> None:
    alike = np.full(20, 0.01)
    _, d0 = estimate_priors(alike, np.full(20, 2))
    assert float(d0) == pytest.approx(40.0)  # capped at what the table holds
    unlike = np.geomspace(1e-5, 1.0, 20)
    _, d0_unlike = estimate_priors(unlike, np.full(20, 2))
    assert float(d0_unlike) < 2.0
    _, few = estimate_priors(alike[:2], np.full(2, 2))
    assert float(few) == 0.0  # two spreads say nothing about their distribution


def test_the_baseline_share_keeps_its_own_degrees_of_freedom() -> None:
    """Ratios to one baseline share its launch means: 130 stacks do not make that share known."""
    rng = np.random.default_rng(0)
    logs, _ = simulate_logs(Shape(2, 3, 130), Noise(stack_spread=0.0, noisy_share=0.0), 1, rng)
    bounds, _, _ = moderated_intervals(logs)
    assert float(np.median(bounds.df)) < 60  # not the 129 x 1 a naive pool would claim


@pytest.mark.parametrize("shape", [Shape(3, 3, 2), Shape(2, 3, 14), Shape(3, 1, 5), Shape(4, 3, 26),
                                   Shape(6, 5, 3), Shape(12, 1, 130)], ids=str)
def test_coverage_of_a_nominal_95_percent_interval_is_between_93_and_97(shape: Shape) -> None:
    cell = simulate_cell(shape, Noise(), seed=shape.launches * 100 + shape.rounds * 10 + shape.stacks)
    assert cell.coverage is not None
    assert 0.93 <= cell.coverage <= 0.97, cell


def test_one_launch_cells_print_no_interval() -> None:
    cell = simulate_cell(Shape(1, 5, 14), Noise(), runs=20)
    assert cell.intervals == 0 and cell.without == 20 * 13


def test_two_launch_cells_that_cannot_pool_print_no_interval() -> None:
    """Two or three stacks: one or two ratios, nothing lent, so two launches would be 1 df."""
    for stacks in (2, 3):
        cell = simulate_cell(Shape(2, 3, stacks), Noise(), runs=20)
        assert cell.intervals == 0 and cell.without == 20 * (stacks - 1)
    assert simulate_cell(Shape(2, 3, 5), Noise(), runs=20).intervals > 0


def test_launch_intervals_broadcast_a_prior_but_give_one_launch_none() -> None:
    logs = np.log(np.asarray([[[1.0, 1.1, 0.9], [np.nan] * 3], [[1.0, 1.1, 0.9], [1.05, 0.95, 1.0]]]))
    lent = launch_intervals(logs, 0.01, 10.0)
    assert not math.isfinite(float(lent.half[0]))
    assert math.isfinite(float(lent.half[1])) and float(lent.df[1]) == pytest.approx(11.0)


def test_a_one_launch_table_says_how_many_launches_its_size_needs() -> None:
    """One launch gives no spread to lend, but a table of three or more ratios will lend one at
    two launches: its rows say "needs 2 launches"; a table of two ratios "needs 3"."""
    def table(count: int) -> dict[str, Paired]:
        return {f"s{i}": Paired(tuple(_obs([[1.0 + 0.1 * i, 1.02 + 0.1 * i]])), None, None, None)
                for i in range(count)}

    assert {p.why_none for p in moderated_table(table(4))[0].values()} == {"needs 2 launches"}
    assert {p.why_none for p in moderated_table(table(2))[0].values()} == {"needs 3 launches"}


def test_a_launch_holding_some_stacks_only_is_not_read_as_their_mean_level() -> None:
    # Launch blocks: each launch holds a few stacks of very different levels. The plain mean of
    # a launch is the mean level of its block; the additive fit returns the launch effect.
    rng = np.random.default_rng(5)
    stacks, launches = 30, 12
    level = rng.normal(0.0, 1.0, stacks)
    effect = rng.normal(0.0, 0.05, launches)
    means = np.full((stacks, launches), np.nan)
    for cycle in range(4):
        order = rng.permutation(stacks)
        for block in range(3):
            for s in order[block::3]:
                means[s, cycle * 3 + block] = level[s] + effect[cycle * 3 + block]
    found = launch_effects(means)
    assert np.allclose(found - found.mean(), effect - effect.mean(), atol=1e-8)
    complete = level[:, None] + effect[None, :]
    assert np.allclose(launch_effects(complete), complete.mean(axis=0))  # every stack: the launch's mean


def test_stacks_in_blocks_get_intervals_as_narrow_as_their_own_spread() -> None:
    rng = np.random.default_rng(6)
    stacks, cycles, blocks = 40, 3, 4
    level = rng.normal(0.0, 1.0, stacks)
    logs = np.full((stacks, cycles * blocks, 1), np.nan)
    for cycle in range(cycles):
        order = rng.permutation(stacks)
        for block in range(blocks):
            shift = rng.normal(0.0, 0.01)
            for s in order[block::blocks]:
                logs[s, cycle * blocks + block, 0] = level[s] + shift + rng.normal(0.0, 0.01)
    bounds, _, _ = moderated_intervals(logs)
    assert np.nanmedian(bounds.half) < 0.05  # the blocks' mean levels (sd ~0.3) would give ±50%
