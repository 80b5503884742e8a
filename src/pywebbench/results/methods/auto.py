"""Auto: duet or interleaved, chosen for the run before it plans (plan/method_choice.py).

A chooser, never a window's own method: no trial records it. It is a strategy so that the
checks made before the choice can ask it like any method; its answers are those of both choices
(placeable on several hosts and adaptive allocation because it chooses interleaved there; tunable
because --tune chooses interleaved; its baseline must be present because it may choose duet).
"""

from __future__ import annotations

from pywebbench.results.methods.strategy import MethodStrategy

AUTO = MethodStrategy(
    name="auto", paired=True, loaded_at_once=1, on_several_hosts=True, allocates=True,
    side_by_side=False, pairs_with_baseline=True, tunable=True, shardable=False, probes_in_phase=False,
    chooser=True)
