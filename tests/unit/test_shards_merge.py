"""Chaining shards: the host term from the overlap stacks, coverage kept by simulation, verdicts."""

from __future__ import annotations

import math

import numpy as np
import pytest

from pywebbench.analyze.moderation import t_quantile
from pywebbench.analyze.neighbours import PairVerdict
from pywebbench.analyze.paired import Interval
from pywebbench.analyze.shards import across_shards, host_term, merge_cell, overlap_mean, independent_verdict

BASE = "flask:gunicorn-sync"


def _interval(ratio: float, se: float, df: float = 2.0, launches: int = 3) -> Interval:
    half = t_quantile(df) * se
    return Interval(ratio, ratio * math.exp(-half), ratio * math.exp(half), 2 * launches, launches, se, df)


def test_no_overlap_from_two_shards_means_no_host_term_and_no_interval() -> None:
    term = host_term({"a": [_interval(1.1, 0.01)], "b": []})
    assert term.variance is None and term.host_sd is None
    assert across_shards(_interval(1.2, 0.01), term) is None


def test_the_host_term_is_the_overlap_spread_between_shards() -> None:
    # a: 1.00 and 1.10 on two shards, b: 2.00 and 2.20: both move by the same log step
    term = host_term({"a": [_interval(1.0, 0.001), _interval(1.1, 0.001)],
                      "b": [_interval(2.0, 0.001), _interval(2.2, 0.001)]})
    step = math.log(1.1)
    assert term.df == 2
    assert term.variance == pytest.approx(step ** 2 / 2)
    assert term.host_sd == pytest.approx(math.sqrt(step ** 2 / 2 - 0.001 ** 2))
    assert term.heterogeneity_p is not None and term.heterogeneity_p < 1e-6  # far beyond their own noise
    merged = across_shards(_interval(1.5, 0.001), term)
    assert merged is not None and merged.se_log == pytest.approx(math.sqrt(step ** 2 / 2))
    assert merged.df == pytest.approx(2.0, rel=1e-3)  # the host term's, its own noise being tiny


def test_shards_that_agree_leave_a_block_stack_its_own_interval() -> None:
    own = _interval(1.3, 0.02)
    term = host_term({"a": [_interval(1.0, 0.02), _interval(1.0, 0.02)], "b": [_interval(0.9, 0.02), _interval(0.9, 0.02)]})
    assert term.variance == 0.0 and term.heterogeneity_p == pytest.approx(1.0) and term.host_sd == 0.0
    merged = across_shards(own, term)
    assert merged is not None and merged.se_log == pytest.approx(0.02) and merged.df == own.df


def _coverage(tau: float, sigma: float, block_sigma: float, shards: int, runs: int,
              seed: int) -> tuple[float, float]:
    """Share of runs whose block-stack and overlap intervals hold the true log ratio (0).

    Each shard's reading of a stack: the truth + its host term (sd tau) + own noise, with its se
    estimated from three launches (df 2), as a shard's interval is.
    """
    rng = np.random.default_rng(seed)
    block = overlap = 0
    df = 2
    for _ in range(runs):
        def reading(noise: float) -> Interval:
            y = rng.normal(0, tau) + rng.normal(0, noise)
            se = noise * math.sqrt(rng.chisquare(df) / df)
            return _interval(math.exp(y), se, df)

        overlaps = {name: [reading(sigma) for _ in range(shards)] for name in ("a", "b")}
        term = host_term(overlaps)
        merged = across_shards(reading(block_sigma), term)
        assert merged is not None
        block += merged.low <= 1.0 <= merged.high
        mean = overlap_mean(overlaps["a"], term)
        assert mean is not None
        overlap += mean.low <= 1.0 <= mean.high
    return block / runs, overlap / runs


@pytest.mark.parametrize("tau", [0.0, 0.02, 0.06])
@pytest.mark.parametrize("block_sigma", [0.02, 0.05])
@pytest.mark.parametrize("shards", [2, 3, 5])
def test_intervals_across_shards_cover_95_percent_whatever_the_host_term(tau: float, block_sigma: float,
                                                                         shards: int) -> None:
    """2,000 simulated runs per shape (the overlap's own noise 2%, the block stack's 2% or 5%, three
    launches a shard, host terms of 0-3x the own noise): the block stack's and the overlap stack's 95%
    intervals hold the truth 93-97% of the time, give or take the simulation's own 0.5 points (sd)."""
    block, overlap = _coverage(tau, 0.02, block_sigma, shards, 2000, seed=int(tau * 1000) + 10 * shards)
    assert 0.925 <= block <= 0.975, block
    assert 0.925 <= overlap <= 0.975, overlap


def test_pair_verdicts_at_the_edges() -> None:
    tight = 0.002
    assert independent_verdict(_interval(1.10, tight), _interval(1.0, tight), 0.03) is PairVerdict.DIFFERENT
    assert independent_verdict(_interval(1.005, tight), _interval(1.0, tight), 0.03) is PairVerdict.EQUIVALENT
    # within the margin but too wide to show it
    assert independent_verdict(_interval(1.005, 0.05), _interval(1.0, 0.05), 0.03) is PairVerdict.UNRESOLVED
    # 2.9% apart with a tight interval: different, not equivalent
    assert independent_verdict(_interval(1.029, tight), _interval(1.0, tight), 0.03) is PairVerdict.DIFFERENT


def test_merge_cell_ranks_every_stack_with_its_shard_and_verdict() -> None:
    readings = {
        1: {BASE: None, "o1": _interval(1.5, 0.01), "o2": _interval(0.8, 0.01), "x": _interval(2.0, 0.01),
            "slow": None},
        2: {BASE: None, "o1": _interval(1.52, 0.01), "o2": _interval(0.81, 0.01), "y": _interval(1.2, 0.01)},
    }
    term, agreement, rows = merge_cell(readings, BASE, ("o1", "o2"), 0.05)
    assert term.df == 2
    assert [r.stack for r in agreement] == ["o1", "o2"]
    assert [r.stack for r in rows] == ["x", "o1", "y", BASE, "o2", "slow"]
    by = {r.stack: r for r in rows}
    assert by["x"].shards == (1,) and by["y"].shards == (2,) and by["o1"].shards == (1, 2)
    assert by["o1"].interval is not None and by["o1"].interval.center == pytest.approx(math.sqrt(1.5 * 1.52))
    assert by["slow"].interval is None and by["slow"].note == "its shard gave it no interval"
    assert by[BASE].interval is None and by[BASE].next_verdict is not None  # against o2, from o2's interval
    assert by["slow"].next_verdict is None and by["o2"].next_verdict is None  # no interval below o2


def test_a_host_term_clipped_at_0_says_so_in_the_result_and_the_report() -> None:
    from pywebbench.analyze.shards import HostTerm, ShardedCell, ShardedRun
    from pywebbench.plan.shards import Shard, ShardPlan
    from pywebbench.report.shards import render_sharded

    agree = host_term({"a": [_interval(1.0, 0.02), _interval(1.0, 0.02)]})
    assert agree.clipped and agree.host_sd == 0.0  # V = 0 under own noise 0.02^2
    apart = host_term({"a": [_interval(1.0, 0.001), _interval(1.1, 0.001)]})
    assert not apart.clipped and apart.host_sd is not None and apart.host_sd > 0
    assert not host_term({}).clipped

    def page(term: HostTerm) -> str:
        plan = ShardPlan(BASE, ("a",), (Shard(1, (BASE, "a"), ()), Shard(2, (BASE, "a"), ())))
        cell = ShardedCell("hello (100 connections)", term, (), (), ((1, 1000.0), (2, 1010.0)))
        return render_sharded(ShardedRun(1, plan, 0.02, (cell,)))

    assert "a host term clipped at 0 (the spread is below the own noise" in page(agree)
    assert "clipped" not in page(apart) and "a host term of about" in page(apart)
