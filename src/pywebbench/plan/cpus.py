"""CPU sets: the syntax taskset uses, and the split between the stack and the load generator."""

from __future__ import annotations

from dataclasses import dataclass

from pywebbench.core.errors import UserError


@dataclass(frozen=True)
class CpuSplit:
    """Disjoint CPU sets for the stack and the load generator, so neither steals the other's."""

    stack: tuple[int, ...]
    loadgen: tuple[int, ...]

    @property
    def disjoint(self) -> bool:
        return not set(self.stack) & set(self.loadgen)


MAX_CPUS = 4096
"""Linux's CPU numbers on any machine this runs on are below this (its NR_CPUS default)."""


def parse_cpu_list(text: str) -> tuple[int, ...]:
    """'0-2,5' -> (0, 1, 2, 5), the syntax taskset and cpusets use."""
    cpus: set[int] = set()
    try:
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            low, high = (int(x) for x in part.split("-", 1)) if "-" in part else (int(part), int(part))
            if not 0 <= low <= high < MAX_CPUS:  # a typo's range must not build a huge set
                raise ValueError
            cpus.update(range(low, high + 1))
    except ValueError:
        raise UserError(f"bad CPU list {text!r}: use a form like 0-2,5 (CPUs 0-{MAX_CPUS - 1})") from None
    if not cpus:
        raise UserError(f"empty CPU list {text!r}")
    return tuple(sorted(cpus))


def default_split(available: tuple[int, ...]) -> CpuSplit:
    """A quarter of the CPUs (at least one) for the generator, the rest for the stack."""
    if len(available) < 2:
        return CpuSplit(stack=available, loadgen=available)
    share = max(1, len(available) // 4)
    return CpuSplit(stack=available[share:], loadgen=available[:share])
