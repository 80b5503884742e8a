"""Two versions' profiles of the same stack and cell (--profile), paired for their differential:
a gate's `#base` and `#head` in one run (`app --baseline-*`), or a stack in two runs (`compare`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from pywebbench.analyze.gate import BASE, HEAD
from pywebbench.profile.stacks import Stacks, expand
from pywebbench.results.model import ProfileRecord


@dataclass(frozen=True)
class ProfilePair:
    stack: str
    """The stack both versions ran under (a gate's stack id, a compare's label)."""
    workload: str
    cell: int
    """1, or the nth cell of this stack and workload where there are several (a sweep's points)."""
    base: Stacks
    head: Stacks


def _stacks(record: ProfileRecord) -> Stacks:
    return expand(record.frames, record.stacks)


def _pairs(matched: Iterable[tuple[str, ProfileRecord, ProfileRecord]]) -> tuple[ProfilePair, ...]:
    found = sorted(matched, key=lambda m: (m[0], m[2].spec.workload, repr(m[2].spec.cell)))
    seen: dict[tuple[str, str], int] = {}
    pairs = []
    for stack, base, head in found:
        nth = seen[(stack, head.spec.workload)] = seen.get((stack, head.spec.workload), 0) + 1
        pairs.append(ProfilePair(stack, head.spec.workload, nth, _stacks(base), _stacks(head)))
    return tuple(pairs)


def sampled(records: Iterable[ProfileRecord]) -> list[ProfileRecord]:
    return [r for r in records if r.samples > 0 and r.error is None and r.unreadable is None]


def gate_pairs(profiles: Iterable[ProfileRecord]) -> tuple[ProfilePair, ...]:
    """Each stack and cell of one run profiled as both its #base and its #head."""
    sides: dict[tuple[str, object], dict[str, ProfileRecord]] = {}
    for record in sampled(profiles):
        if record.spec.alias in (BASE, HEAD):
            sides.setdefault((record.spec.stack_id, record.spec.cell), {})[record.spec.alias] = record
    return _pairs((stack, pair[BASE], pair[HEAD]) for (stack, _cell), pair in sides.items()
                  if BASE in pair and HEAD in pair)


def compare_pairs(before: Iterable[ProfileRecord], after: Iterable[ProfileRecord]) -> tuple[ProfilePair, ...]:
    """Each stack and cell profiled in both runs, the first run as base."""
    earlier = {(r.label, r.spec.cell): r for r in sampled(before)}
    return _pairs((r.label, earlier[(r.label, r.spec.cell)], r) for r in sampled(after)
                  if (r.label, r.spec.cell) in earlier)
