"""The host's noise read from a run's own windows: the pooled spread of each stack's window ratios."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from pywebbench.analyze.host_noise import window_noise
from pywebbench.results.model import Method, TrialResult
from support.builders import trial


def _window(stack_id: str, rps: float, round_no: int) -> TrialResult:
    made = trial(stack_id, rps, round_no=round_no)
    return replace(made, spec=replace(made.spec, method=Method.INTERLEAVED, launch=round_no))


def test_the_spread_is_pooled_over_stacks_about_their_own_levels() -> None:
    swings = [0.05, -0.05, 0.05, -0.05]
    windows = [_window("base", 1000.0, r + 1) for r in range(4)]
    windows += [_window("fast", 2000.0 * math.exp(s), r + 1) for r, s in enumerate(swings)]
    windows += [_window("slow", 500.0 * math.exp(-s), r + 1) for r, s in enumerate(swings)]
    noise = window_noise(windows, "base")
    assert noise is not None and (noise.stacks, noise.windows, noise.df) == (2, 8, 6)
    # the levels 2x and 0.5x take no part (synthetic windows round their request counts)
    assert noise.sd == pytest.approx(math.sqrt(8 * 0.0025 / 6), rel=0.01)
    line = noise.line(3, 2)
    assert "spreads 5.9%" in line and "3 launch(es) of 2 round(s)" in line and "6 about" in line
    assert noise.resolves(6, 2) < noise.resolves(3, 2)


def test_one_window_per_stack_says_nothing_yet() -> None:
    assert window_noise([_window("base", 1000.0, 1), _window("fast", 2000.0, 1)], "base") is None
