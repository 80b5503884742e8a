"""The generator ceiling is read over the trial's own warm-up and window, within bounds."""

from __future__ import annotations

import pytest

from pywebbench.measure.ceiling import SHORTEST_S, WARMUP_S, WINDOW_S, ceiling_seconds
from pywebbench.results.model import TrialSpec


def _spec(duration_s: float, warmup_s: float) -> TrialSpec:
    return TrialSpec("r1-x-hello", "flask:gunicorn-sync", "hello", 8, duration_s, warmup_s, 1, "wrk")


@pytest.mark.parametrize(("duration_s", "warmup_s", "expected"), [
    (30.0, 5.0, (WARMUP_S, WINDOW_S)),  # a real run: the full ceiling window, never longer
    (1.0, 0.5, (0.5, 1.0)),  # a short run's ceiling is as long as its windows
    (0.2, 0.0, (SHORTEST_S, SHORTEST_S)),  # never shorter than half a second
])
def test_the_ceiling_window_follows_the_trial_within_bounds(duration_s: float, warmup_s: float,
                                                             expected: tuple[float, float]) -> None:
    assert ceiling_seconds(_spec(duration_s, warmup_s)) == expected
