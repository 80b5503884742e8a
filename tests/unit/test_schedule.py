"""A recording's schedule: its mean rate, the speed a rate asks for, and each round's stretch."""

from __future__ import annotations

import pytest

from pywebbench.catalog.schedule import Schedule, per_second


def _even(count: int, gap_s: float) -> Schedule:
    return Schedule(tuple(i * gap_s for i in range(count)), tuple(i % 3 for i in range(count)))


def test_mean_rate_counts_one_gap_past_the_last_arrival() -> None:
    schedule = _even(100, 0.01)  # 100 arrivals 10 ms apart: one second of recording
    assert schedule.span_s == pytest.approx(1.0)
    assert schedule.mean_rate == pytest.approx(100.0)
    assert schedule.speed_for(250.0) == pytest.approx(2.5)


def test_a_stretch_at_the_logs_own_rate_keeps_its_times_and_kinds() -> None:
    schedule = Schedule((0.0, 0.1, 0.1, 0.5, 0.9), (0, 1, 2, 0, 1))
    stretch = schedule.stretch(0.0, 0.6, schedule.mean_rate)
    assert [round(t, 6) for t, _ in stretch] == [0.0, 0.1, 0.1, 0.5]
    assert [k for _, k in stretch] == [0, 1, 2, 0]


def test_twice_the_rate_plays_twice_the_recording_in_the_same_time() -> None:
    schedule = _even(100, 0.01)
    once = schedule.stretch(0.0, 0.5, 100.0)
    twice = schedule.stretch(0.0, 0.5, 200.0)
    assert len(once) == 50 and len(twice) == 100
    assert twice[-1][0] == pytest.approx(0.495)


def test_a_stretch_past_the_end_wraps_round_to_the_start() -> None:
    schedule = _even(10, 0.1)  # one second
    stretch = schedule.stretch(0.85, 0.5, 10.0)
    assert [round(t, 6) for t, _ in stretch] == [0.05, 0.15, 0.25, 0.35, 0.45]
    assert [k for _, k in stretch] == [0, 0, 1, 2, 0]  # arrival 9, then 0..3 of the next lap
    assert all(b >= a for (a, _), (b, _) in zip(stretch, stretch[1:]))


def test_each_round_starts_where_the_last_ended_and_round_one_at_the_start() -> None:
    schedule = _even(1000, 0.01)  # ten seconds
    assert schedule.start_for_round(1, 2.0, 100.0) == 0.0
    assert schedule.start_for_round(2, 2.0, 100.0) == pytest.approx(2.0)
    assert schedule.start_for_round(3, 2.0, 200.0) == pytest.approx(8.0)
    assert schedule.start_for_round(4, 2.0, 200.0) == pytest.approx(2.0)  # 12 s, wrapped


def test_a_bad_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="must not decrease"):
        Schedule((0.0, 1.0, 0.5), (0, 0, 0))
    with pytest.raises(ValueError, match="offsets for"):
        Schedule((0.0, 1.0), (0,))
    with pytest.raises(ValueError, match="at least two"):
        Schedule((0.0,), (0,))


def test_per_second_counts_whole_seconds_only_inside_the_window() -> None:
    assert per_second([0.0, 0.5, 0.99, 1.0, 2.7, 3.2, -0.1], 3.0) == [3, 1, 1]


def test_per_second_can_count_what_came_after_the_window_in_its_last_second() -> None:
    # sent 3 ms after a 2 s window's end: the window sent it, so its last second holds it
    assert per_second([0.2, 1.999, 2.003], 2.0, late_in_last=True) == [1, 2]
    assert per_second([0.2, 1.999, 2.003], 2.0) == [1, 1]
