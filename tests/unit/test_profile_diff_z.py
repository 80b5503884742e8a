"""The differential's order: a change ranks by how far it stands out from the sampling's own noise
(z), so a new function's small share comes before a big share's chance wobble of the same size."""

from __future__ import annotations

import math

from pywebbench.profile.diff import FunctionShare, differential, grew_most
from pywebbench.profile.stacks import Stacks


def _stacks(counts: dict[str, int]) -> Stacks:
    return Stacks.of({("main", name): n for name, n in counts.items()})


def test_a_new_function_ranks_before_a_larger_wobble_of_a_big_share() -> None:
    # Gate 9 of docs/results/profile-gate/15us-30s: notes 16.5% -> 14.6% came before _audit_trail 0% -> 1.6%
    base = _stacks({"notes": 1650, "other": 8350})
    head = _stacks({"notes": 1460, "_audit_trail": 160, "other": 8380})
    first = differential(base, head)[0]
    assert first.function == "_audit_trail" and abs(first.delta) < abs(differential(base, head)[1].delta)
    assert grew_most(base, head) is not None and grew_most(base, head).function == "_audit_trail"  # type: ignore[union-attr]


def test_z_is_the_change_over_its_binomial_standard_error() -> None:
    share = FunctionShare("f", 0.10, 0.12, 10_000, 10_000)
    assert math.isclose(share.z, 0.02 / math.sqrt(0.1 * 0.9 / 1e4 + 0.12 * 0.88 / 1e4))
    assert FunctionShare("f", 0.0, 0.0, 10, 10).z == 0.0
