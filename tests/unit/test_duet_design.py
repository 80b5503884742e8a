"""Which pairs a duet round loads: every pair up to five stacks, two cycles beyond."""

from __future__ import annotations

import random
from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from pywebbench.plan.duet_design import duet_pairs, duet_windows, provisional_order


def _labels(count: int) -> list[str]:
    return [f"s{i:03d}" for i in range(count)]


def _connected(labels: list[str], pairs: list[tuple[str, str]]) -> bool:
    reached, todo = {labels[0]}, [labels[0]]
    while todo:
        here = todo.pop()
        for a, b in pairs:
            for x, y in ((a, b), (b, a)):
                if x == here and y not in reached:
                    reached.add(y)
                    todo.append(y)
    return reached == set(labels)


def _variances(labels: list[str], pairs: list[tuple[str, str]], baseline: str) -> np.ndarray:
    """The least-squares covariance of the levels (baseline at 0), in units of one pair's variance."""
    others = [label for label in labels if label != baseline]
    column = {label: i for i, label in enumerate(others)}
    design = np.zeros((len(pairs), len(others)))
    for row, (a, b) in enumerate(pairs):
        if a != baseline:
            design[row, column[a]] += 1.0
        if b != baseline:
            design[row, column[b]] -= 1.0
    inner = np.linalg.inv(design.T @ design)
    full = np.zeros((len(labels), len(labels)))
    index = [labels.index(label) for label in others]
    full[np.ix_(index, index)] = inner
    return full


@pytest.mark.parametrize("count", [2, 3, 4, 5])
def test_up_to_five_stacks_a_round_loads_every_pair(count: int) -> None:
    labels = _labels(count)
    pairs = duet_pairs(labels, {}, random.Random(1))
    assert len(pairs) == len({frozenset(p) for p in pairs}) == count * (count - 1) // 2
    assert {frozenset(p) for p in pairs} == {frozenset(p) for p in combinations(labels, 2)}
    assert duet_windows(count) == len(pairs)


@pytest.mark.parametrize("count", [6, 7, 14, 26, 127])
def test_beyond_five_two_cycles_load_each_stack_four_times_and_stay_connected(count: int) -> None:
    labels = _labels(count)
    for seed in range(5):
        pairs = duet_pairs(labels, {}, random.Random(seed))
        assert len({frozenset(p) for p in pairs}) == len(pairs)  # no pair twice
        assert len(pairs) <= duet_windows(count) == 2 * count
        degrees = Counter(x for pair in pairs for x in pair)
        assert len(pairs) == 2 * count and set(degrees.values()) == {4}  # a cycle sharing no pair was found
        assert _connected(labels, pairs)


def test_the_order_cycle_pairs_each_stack_with_its_neighbours_by_level() -> None:
    labels = _labels(14)
    levels = {label: float(i) for i, label in enumerate(labels)}
    order = provisional_order(labels, levels, random.Random(0))
    assert order == labels[::-1]  # highest first
    pairs = {frozenset(p) for p in duet_pairs(labels, levels, random.Random(0))}
    assert all(frozenset((a, b)) in pairs for a, b in zip(order, order[1:]))
    # until every stack has a level the order is random: no stack is placed by a partial reading
    partial = provisional_order(labels, {labels[0]: 1.0}, random.Random(0))
    assert sorted(partial) == sorted(labels) and partial != order


def test_the_two_cycles_keep_ratios_to_the_baseline_and_between_neighbours_near_a_direct_pairs() -> None:
    """The module's claim: a ratio to the baseline 0.6-0.9 of a direct pair's variance, one
    between neighbours in the order 0.4-0.6, at every size (the order cycle alone would leave a far
    stack's ratio to the baseline at several times a pair's, 2.9x at 26 stacks)."""
    for count in (6, 14, 26, 127):
        labels = _labels(count)
        levels = {label: float(i) for i, label in enumerate(labels)}
        rng = random.Random(count)
        baseline = labels[rng.randrange(count)]
        pairs = duet_pairs(labels, levels, rng)
        cov = _variances(labels, pairs, baseline)
        to_baseline = [cov[i, i] for i, label in enumerate(labels) if label != baseline]
        order = [labels.index(x) for x in provisional_order(labels, levels, rng)]
        between = [cov[a, a] + cov[b, b] - 2 * cov[a, b] for a, b in zip(order, order[1:])]
        assert 0.3 < float(np.mean(to_baseline)) and max(to_baseline) < 0.95, (count, max(to_baseline))
        assert 0.3 < float(np.mean(between)) < 0.6 and max(between) < 0.7, (count, max(between))


def test_duplicate_labels_are_refused() -> None:
    with pytest.raises(ValueError, match="duplicate"):
        duet_pairs(["a", "a", "b"], {}, random.Random(0))
