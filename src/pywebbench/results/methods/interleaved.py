"""Interleaved: every server of a launch live at once, short windows cycled in a fresh order each round."""

from __future__ import annotations

from pywebbench.results.methods.strategy import MethodStrategy

INTERLEAVED = MethodStrategy(
    name="interleaved", paired=True, loaded_at_once=1, on_several_hosts=True, allocates=True,
    side_by_side=False, pairs_with_baseline=False, tunable=True, shardable=True, probes_in_phase=True)
