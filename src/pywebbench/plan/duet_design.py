"""Which pairs of stacks one duet round loads.

Up to COMPLETE_UP_TO stacks, every pair: k(k-1)/2 windows, each stack loaded in k-1 of them.
Beyond that every pair costs too much (325 windows a round at 26 stacks), so a round loads two
closed cycles through the stacks, 2k windows, each stack in four of them:

- the *order cycle* runs through a provisional order (the stacks' levels read from the rounds so
  far, a random order before any): each stack beside the one just above and just below it, the
  pairs a ranking must tell apart, measured directly;
- the *random cycle*, drawn afresh each round, puts any two stacks a few pairs apart, so every
  ratio to the baseline stays about as tight as a direct pair's (the order cycle alone would
  chain a far stack's ratio through half the table).

Both cycles give every stack the same number of windows, so every stack has the same load
history within the round (what made the complete design beat a star around the baseline,
analyze/duet.py). The round's ratios come from all of its pairs by least squares
(analyze/duet.py), whichever design chose them; the design is fixed before the round's windows,
so their noise cannot steer it. From 6 to 127 stacks a ratio to the baseline has on average
0.4-0.7 of one direct pair's variance (at most 0.9), a ratio between neighbours in the order
0.4-0.5 (at most 0.55) (tests/unit/test_duet_design.py); docs/method.md shows the intervals'
coverage by simulation (analyze/duet_coverage.py).
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from itertools import combinations

COMPLETE_UP_TO = 5
"""Stacks up to which a round loads every pair (10 windows at 5, against 2k = 10 beyond)."""

_DRAWS = 200
"""Random cycles drawn to find one sharing no pair with the order cycle (about one in eight does)."""


def duet_windows(stacks: int) -> int:
    """Windows one round loads per workload: every pair, or the two cycles."""
    if stacks <= COMPLETE_UP_TO:
        return stacks * (stacks - 1) // 2
    return 2 * stacks


def provisional_order(labels: Sequence[str], levels: Mapping[str, float], rng: random.Random) -> list[str]:
    """The labels by level, highest first; a random order until every label has one."""
    if any(label not in levels for label in labels):
        order = list(labels)
        rng.shuffle(order)
        return order
    return sorted(labels, key=lambda label: (-levels[label], label))


def duet_pairs(labels: Sequence[str], levels: Mapping[str, float], rng: random.Random) -> list[tuple[str, str]]:
    """The pairs one round loads, in a random order, each with a random side first."""
    if len(set(labels)) != len(labels):
        raise ValueError(f"duplicate labels in {list(labels)}")
    if len(labels) <= COMPLETE_UP_TO:
        pairs = list(combinations(labels, 2))
    else:
        order = provisional_order(labels, levels, rng)
        along = _cycle(order)
        seen = {frozenset(p) for p in along}
        best: list[tuple[str, str]] = []
        for _ in range(_DRAWS):
            shuffled = list(labels)
            rng.shuffle(shuffled)
            fresh = [p for p in _cycle(shuffled) if frozenset(p) not in seen]
            if len(fresh) > len(best):
                best = fresh
            if len(best) == len(labels):
                break
        pairs = along + best
    out = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in pairs]
    rng.shuffle(out)
    return out


def _cycle(order: Sequence[str]) -> list[tuple[str, str]]:
    return [(order[i], order[(i + 1) % len(order)]) for i in range(len(order))]
