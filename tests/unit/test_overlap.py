"""The no-overlap check's expectation under a session cap and app-side pools (issue 13)."""

from __future__ import annotations

from pywebbench.measure.overlap import allowed_in_flight, overlap_verdict


def test_in_flight_is_bounded_by_the_cap_the_pools_and_the_burst() -> None:
    assert allowed_in_flight(100) == 100
    assert allowed_in_flight(100, max_db_sessions=3) == 3
    assert allowed_in_flight(100, max_db_sessions=100, db_pool=4, workers=2) == 8
    assert allowed_in_flight(100, max_db_sessions=5, db_pool=4, workers=2) == 5
    assert allowed_in_flight(10, max_db_sessions=100, db_pool=0, workers=4) == 10  # 0: no pool


def test_tornado_under_three_sessions_is_not_accused() -> None:
    # Seen while running seed000-better-sync: 100 concurrent /db of 10 ms took 0.81 s, one
    # after another 1.00 s, with --max-db-sessions 3: at best 34 x 10 ms = 0.34 s.
    assert overlap_verdict(100, 0.01, 0.81, "/db", in_flight=3) is None
    # The same burst without the cap in the expectation is what accused it before the fix.
    found = overlap_verdict(100, 0.01, 0.81, "/db")
    assert found is not None and found.startswith("no-overlap: 100 concurrent /db took 0.81s")


def test_a_serialising_stack_is_still_caught_when_the_cap_leaves_room() -> None:
    # 20 sessions: a correct stack could finish in 0.05 s; 1.02 s is seed 000's bug.
    found = overlap_verdict(100, 0.01, 1.02, "/db", in_flight=20)
    assert found is not None and "20 at a time allowed, at best 0.05s" in found
    assert overlap_verdict(100, 0.01, 0.30, "/db", in_flight=20) is None
    # Exactly at the edge: 4 at a time leaves a floor of 0.25 of the serial time, judged.
    assert overlap_verdict(100, 0.01, 0.80, "/db", in_flight=4) is not None
    assert overlap_verdict(100, 0.01, 0.60, "/db", in_flight=4) is None


def test_uncapped_waits_keep_the_old_threshold() -> None:
    assert overlap_verdict(20, 0.05, 0.76, "/upstream") is not None
    assert overlap_verdict(20, 0.05, 0.74, "/upstream") is None
