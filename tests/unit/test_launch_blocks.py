"""Launch blocks: a random partition first, then runs of neighbours in the ranking so far, the
boundaries moving every other cycle so that every adjacent pair shares a launch within two cycles."""

from __future__ import annotations

import random

import pytest

from pywebbench.results.load import Latency, LoadResult, SocketErrors
from pywebbench.measure.launch_blocks import block_count, neighbour_blocks, random_blocks, ranking
from pywebbench.results.model import StackInfo, TrialResult, TrialSpec, TrialStatus

STACKS = [f"s{i:02d}" for i in range(13)]


@pytest.mark.parametrize("block", [2, 3, 4, 7])
def test_every_adjacent_pair_shares_a_block_within_two_cycles_at_the_random_partition_s_cost(block: int) -> None:
    cycles = [neighbour_blocks(STACKS, block, cycle) for cycle in (0, 1)]
    for blocks in cycles:
        assert len(blocks) == block_count(len(STACKS), block) == len(random_blocks(STACKS, block, random.Random(1)))
        assert sorted(s for b in blocks for s in b) == STACKS and all(len(b) <= block for b in blocks)
    for upper, lower in zip(STACKS, STACKS[1:]):
        assert any({upper, lower} <= b for blocks in cycles for b in blocks), (upper, lower)


def test_one_stack_a_launch_is_one_block_a_stack_every_cycle() -> None:
    # no neighbour can share a launch then: the pair is judged through the baseline alone
    assert neighbour_blocks(STACKS, 1, 1) == [{s} for s in STACKS]


def _trial(label: str, rps: float, ok: bool = True) -> TrialResult:
    spec = TrialSpec(f"t-{label}-{rps}", label, "hello", 8, 1.0, 0.0, 1, "wrk", method="interleaved")
    load = LoadResult("wrk", int(rps), 1.0, SocketErrors(), 0, Latency(1.0, 0.1, 5.0, ()))
    stack = StackInfo(label, "flask", "Flask", "gunicorn", "Gunicorn", "sync", "sync", "WSGI", "Sync", "-", "-", 1, 1)
    return TrialResult(spec, stack, TrialStatus.OK if ok else TrialStatus.SERVER_FAILED, "", "", load=load)


def test_the_ranking_is_by_median_valid_rate_and_waits_for_every_stack() -> None:
    results = [_trial("a", 100), _trial("a", 300), _trial("a", 200), _trial("b", 900), _trial("c", 500),
               _trial("c", 5000, ok=False)]
    assert ranking(results, ["a", "b", "c"]) == ["b", "c", "a"]
    assert ranking(results, ["a", "b", "c", "d"]) is None  # d has no valid window yet: a random partition
