"""Restart: a server start, a warmup and one window per trial (the seeds' method)."""

from __future__ import annotations

from pywebbench.results.methods.strategy import MethodStrategy

# One round by default: each trial is its own start. calibrate sizes it in interleaved rounds
# (alone on the CPU, as restart measures).
RESTART = MethodStrategy(
    name="restart", paired=False, loaded_at_once=1, on_several_hosts=True, allocates=False,
    side_by_side=False, pairs_with_baseline=False, tunable=False, shardable=False, probes_in_phase=False,
    default_rounds=1, sized_in="interleaved")
