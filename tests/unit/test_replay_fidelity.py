"""A replayed window's fidelity to its log, and the words for it."""

from __future__ import annotations

import pytest

from pywebbench.analyze.replay_fidelity import fidelities, fidelity
from pywebbench.report.replay_view import replay_lines, replay_markdown
from pywebbench.results.model import Latency, LoadResult, SocketErrors, StackInfo, TrialResult, TrialSpec, TrialStatus


def _trial(per_second: tuple[tuple[int, int, int, int], ...], trial_id: str = "r1-app:gunicorn-sync-app") -> TrialResult:
    spec = TrialSpec(trial_id, "app:gunicorn-sync", "app", 64, 3.0, 0.0, 1, "replay", rate=100.0)
    info = StackInfo("app:gunicorn-sync", "app", "app", "gunicorn", "Gunicorn", "sync", "sync", "WSGI", "Sync",
                     "-", "-", 2, 1)
    load = LoadResult("replay", 300, 3.0, SocketErrors(), 0, Latency(1.0, 0.1, 2.0, ()), per_second=per_second)
    return TrialResult(spec, info, TrialStatus.OK, "t0", "t1", load=load)


def test_the_worst_judged_second_and_bursts() -> None:
    found = fidelity(_trial(((100, 98, 98, 0), (300, 309, 290, 12), (20, 30, 30, 0))))
    assert found is not None
    assert found.judged_seconds == 2  # 20 scheduled is too few to judge
    assert found.worst_second == pytest.approx(0.03)
    assert found.peak_to_mean == pytest.approx(300 / 140)
    assert found.kept_up == pytest.approx(418 / 437) and found.waited == 12


def test_a_window_that_was_not_a_replay_has_none() -> None:
    assert fidelity(_trial(())) is None
    assert fidelities([_trial(()), _trial(((100, 100, 100, 0),))])[0].worst_second == 0.0


def test_the_lines_say_kept_or_missed_against_five_percent() -> None:
    kept = replay_lines(fidelities([_trial(((100, 104, 100, 0),))]))
    missed = replay_lines(fidelities([_trial(((100, 90, 90, 5),))]))
    assert "kept (worst of 1 second(s) 4.0% off, target 5%)" in kept[0]
    assert "MISSED (worst of 1 second(s) 10.0% off" in missed[0]
    assert "5.6% waited for a busy connection" in missed[0] and "waited" not in kept[0]


def test_the_markdown_lists_every_second_of_every_window() -> None:
    trials = [_trial(((100, 101, 99, 0), (200, 199, 200, 3)))]
    text = replay_markdown(trials, fidelities(trials))
    assert "| 1 | 200 | 199 | 200 | 3 | 0.995 |" in text and text.startswith("# The log replayed")
