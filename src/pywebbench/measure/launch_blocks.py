"""Which stacks share a launch under launch blocks (`--launch-block N`): at most N stacks and the
baseline each launch, a cycle of launches giving every stack its round.

The first cycle knows nothing of the stacks: a random partition. From the second on, the blocks
are runs of neighbours in the ranking so far (the median req/s of each stack's valid windows in
this set), so adjacent stacks share launches and their pair is judged on what they shared rather
than only through the baseline. The runs' boundaries move by half a block every other cycle, so a
pair split at a boundary in one cycle shares a launch in the next. The count of blocks, and so
the launches a cycle costs, is the random partition's.
"""

from __future__ import annotations

import math
import random
import statistics
from collections.abc import Sequence

from pywebbench.results.model import TrialResult


def block_count(stacks: int, block: int) -> int:
    return max(1, math.ceil(stacks / max(1, block)))


def random_blocks(others: Sequence[str], block: int, rng: random.Random) -> list[set[str]]:
    """A random partition into blocks of near-equal size, at most `block` each."""
    shuffled = sorted(others)
    rng.shuffle(shuffled)
    count = block_count(len(shuffled), block)
    return [set(shuffled[i::count]) for i in range(count)]


def neighbour_blocks(ranked: Sequence[str], block: int, cycle: int) -> list[set[str]]:
    """Runs of neighbours in `ranked`, as many as a random partition has; on odd cycles the
    boundaries sit half a run further on (the ranking read as a circle, so the count holds)."""
    count = block_count(len(ranked), block)
    size = math.ceil(len(ranked) / count)
    offset = (size // 2) * (cycle % 2)
    circle = [*ranked[offset:], *ranked[:offset]]
    return [set(circle[i * size:(i + 1) * size]) for i in range(count) if circle[i * size:(i + 1) * size]]


def ranking(results: Sequence[TrialResult], labels: Sequence[str]) -> list[str] | None:
    """`labels` fastest first by the median req/s of their valid windows; None while one has none."""
    rates: dict[str, list[float]] = {}
    for result in results:
        if result.valid and result.load is not None:
            rates.setdefault(result.spec.label, []).append(result.load.rps)
    if any(label not in rates for label in labels):
        return None
    return sorted(labels, key=lambda label: (-statistics.median(rates[label]), label))
