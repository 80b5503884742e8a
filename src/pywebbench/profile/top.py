"""The functions a profile spent its samples in: own time (the sample's innermost frame) and
total time (anywhere on the stack, once per sample however deep the recursion)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from pywebbench.profile.stacks import Stacks, parse_frame


@dataclass(frozen=True)
class FunctionTime:
    function: str
    own: int
    """Samples with this function as the innermost frame."""
    total: int
    """Samples with this function anywhere on the stack."""
    samples: int
    """Every sample of the profile."""

    @property
    def own_share(self) -> float:
        return self.own / self.samples if self.samples else 0.0

    @property
    def total_share(self) -> float:
        return self.total / self.samples if self.samples else 0.0


def own_counts(stacks: Stacks) -> Counter[str]:
    found: Counter[str] = Counter()
    for stack, count in stacks.counts:
        found[stack[-1]] += count
    return found


def python_own_counts(stacks: Stacks) -> Counter[str]:
    """Own time by Python function: each sample to its innermost Python frame, the native calls
    below it (a C extension, libc, the vDSO's clock) counted with the Python code that made them;
    a sample with no Python frame stays with its leaf."""
    found: Counter[str] = Counter()
    for stack, count in stacks.counts:
        found[next((text for text in reversed(stack) if parse_frame(text).python), stack[-1])] += count
    return found


def total_counts(stacks: Stacks) -> Counter[str]:
    found: Counter[str] = Counter()
    for stack, count in stacks.counts:
        for name in set(stack):
            found[name] += count
    return found


def top_functions(stacks: Stacks, n: int = 20) -> tuple[FunctionTime, ...]:
    """The n functions with the most own time, most first (ties by name)."""
    own, total, samples = own_counts(stacks), total_counts(stacks), stacks.total
    ranked = sorted(own.items(), key=lambda item: (-item[1], item[0]))[:n]
    return tuple(FunctionTime(name, count, total[name], samples) for name, count in ranked)
