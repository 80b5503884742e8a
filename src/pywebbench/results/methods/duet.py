"""Duet: two live stacks loaded at once on the same CPUs, each pair's ratio read side by side."""

from __future__ import annotations

from pywebbench.results.methods.strategy import MethodStrategy

# A duet needs both sides on one machine's CPUs (not --hosts), and its launches load pairs of
# the plan's stacks, which adaptive allocation does not choose.
DUET = MethodStrategy(
    name="duet", paired=True, loaded_at_once=2, on_several_hosts=False, allocates=False,
    side_by_side=True, pairs_with_baseline=True, tunable=False, shardable=False, probes_in_phase=False)
