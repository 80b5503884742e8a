"""A differential profile of two versions (base, head): each function's share of its own
profile's samples in each, and what changed.

Shares, not sample counts: the two windows need not hold the same number of samples (a faster
head serves more requests in the same seconds, at the same sampling rate). A function's share is
its own time over every sample of that profile, own time going to the innermost Python frame:
the native calls a Python function makes (a C extension, libc, the vDSO's clock) count with it,
so a gate names the Python function that grew (a busy loop on time.perf_counter is its own
function's time, not libc's), as a reviewer would look for it. The differential flame graph
draws head's call tree, each frame coloured by how its share of the samples (at that place in
the tree) moved from base: red grew, blue shrank, pale unchanged; a frame base never had is
pure red. Frames only base had are not drawn (they are in the table, with a head share of 0).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from pywebbench.profile.flame import Node, call_tree, flame_svg
from pywebbench.profile.stacks import Stack, Stacks
from pywebbench.profile.top import python_own_counts

FULL_COLOUR_AT = 0.05
"""A change of this share of the samples (5 points) or more takes the full red or blue."""


@dataclass(frozen=True)
class FunctionShare:
    """One function's own time as a share of each version's samples."""

    function: str
    base: float
    head: float
    base_samples: int = 0
    head_samples: int = 0

    @property
    def delta(self) -> float:
        return self.head - self.base

    @property
    def z(self) -> float:
        """The change over its binomial standard error: how far it stands out from the sampling's
        own noise. A share of 15% moves by 2 points between two windows of 6,000 samples by chance
        alone where a new function's 2% cannot; ranked by the raw change the first would come first."""
        var = sum(p * (1 - p) / n for p, n in ((self.base, self.base_samples), (self.head, self.head_samples)) if n)
        return self.delta / math.sqrt(var) if var > 0 else math.copysign(math.inf, self.delta) if self.delta else 0.0


def own_shares(stacks: Stacks) -> dict[str, float]:
    total = stacks.total
    return {name: count / total for name, count in python_own_counts(stacks).items()} if total else {}


def differential(base: Stacks, head: Stacks) -> tuple[FunctionShare, ...]:
    """Every function of either version, the change that stands out most from sampling noise first
    (|z|, then the change's size, then the name)."""
    before, after = own_shares(base), own_shares(head)
    changes = [FunctionShare(name, before.get(name, 0.0), after.get(name, 0.0), base.total, head.total)
               for name in before.keys() | after]
    # Rounded, so two changes of the same size (one up, one down) sort by name, not by float noise.
    return tuple(sorted(changes, key=lambda c: (-round(abs(c.z), 9), -round(abs(c.delta), 12), c.function)))


def top_changes(base: Stacks, head: Stacks, n: int = 10) -> tuple[FunctionShare, ...]:
    """The n functions whose own-time share changed most, either way."""
    return differential(base, head)[:n]


def grew_most(base: Stacks, head: Stacks) -> FunctionShare | None:
    """The function whose share grew most; None when none grew."""
    grown = [c for c in differential(base, head) if c.delta > 0]
    return max(grown, key=lambda c: (round(c.z, 9), c.delta, c.function)) if grown else None


def _path_shares(stacks: Stacks) -> dict[Stack, float]:
    """Each place in the call tree (its path from the root) and its share of every sample."""
    root = call_tree(stacks)
    shares: dict[Stack, float] = {}
    pending = list(root.children.values())
    while pending:
        node = pending.pop()
        shares[node.path] = node.samples / root.samples
        pending += node.children.values()
    return shares


def diff_colour(delta: float) -> str:
    """Red for growth, blue for shrinkage, in proportion up to FULL_COLOUR_AT."""
    strength = min(1.0, abs(delta) / FULL_COLOUR_AT)
    fade = round(235 - 200 * strength)
    return f"rgb(255,{fade},{fade})" if delta > 0 else f"rgb({fade},{fade},255)" if delta < 0 else "rgb(235,235,235)"


def diff_flame_svg(base: Stacks, head: Stacks, title: str) -> str:
    """Head's flame graph, each frame coloured by the change of its share since base."""
    before, after = _path_shares(base), _path_shares(head)

    def colour(node: Node) -> str:
        return diff_colour(after.get(node.path, 0.0) - before.get(node.path, 0.0))

    def tooltip(node: Node, total: int) -> str:
        was, now = before.get(node.path), after.get(node.path, 0.0)
        since = "new in head" if was is None else f"{was:.1%} in base"
        return f"{node.name}: {now:.1%} of head's samples ({node.samples:,}), {since}"

    return flame_svg(head, title, colour, tooltip)
