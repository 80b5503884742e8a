"""The replay generator's plumbing without a server: its files, its choice, its reading."""

from __future__ import annotations

import json

import numpy as np
import pytest

from pywebbench.catalog.schedule import Schedule
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.registry import window_generator
from pywebbench.loadgen.replay import parse_replay, schedule_text, targets_lines
from pywebbench.loadgen.vegeta import Records
from pywebbench.plan.generators import Generator

MIX = (HttpRequest("GET", "/notes?limit=5", weight=3),
       HttpRequest("POST", "/notes", b'{"a": 1}', (("Content-Type", "application/json"),), 1))
SCHEDULE = Schedule((0.0, 0.25, 0.5, 0.75), (0, 1, 0, 0))


def _request(**changes: object) -> LoadRequest:
    base = LoadRequest("http://127.0.0.1:8000/notes", 8, 2.0, rate=4.0, mix=MIX, schedule=SCHEDULE)
    return LoadRequest(**{**base.__dict__, **changes})  # type: ignore[arg-type]


def test_a_window_with_a_recording_goes_to_replay_whatever_the_run_chose() -> None:
    for configured in ("wrk", "oha", "vegeta", "replay"):
        assert window_generator(configured, _request()) == "replay"


def test_replay_chosen_for_a_window_without_a_recording_hands_it_on() -> None:
    assert window_generator("replay", _request(schedule=None)) == "oha"
    assert window_generator("replay", _request(schedule=None, rate=None)) == "wrk"


def test_replay_is_open_loop_but_never_offered_as_the_open_loop_choice() -> None:
    assert Generator("replay").open_loop and Generator("replay").replays
    assert "replay" not in Generator.open_loop_names()


def test_targets_are_one_per_kind_in_mix_order_with_body_and_headers() -> None:
    lines = [json.loads(line) for line in targets_lines(_request()).splitlines()]
    assert [t["method"] for t in lines] == ["GET", "POST"]
    assert lines[0]["url"] == "http://127.0.0.1:8000/notes?limit=5"
    assert lines[1]["body"] == "eyJhIjogMX0="  # base64 of {"a": 1}
    assert lines[1]["header"] == {"Content-Type": ["application/json"]}


def test_the_schedule_file_is_nanoseconds_and_kinds() -> None:
    assert schedule_text([(0.0, 0), (0.0015, 1)]) == "0 0\n1500000 1\n"


def _records(sent_ms: list[float], latency_ms: list[float], codes: list[int]) -> Records:
    n = len(sent_ms)
    return Records(np.array([round(s * 1e6) for s in sent_ms], dtype=np.int64), np.array(codes, dtype=np.int64),
                   np.array([round(x * 1e6) for x in latency_ms], dtype=np.int64), np.arange(n, dtype=np.int64),
                   tuple("read: connection reset" for c in codes if c == 0))


def test_a_request_that_waited_for_a_busy_worker_is_timed_from_its_intended_send() -> None:
    # One worker: request 1 is due at 100 ms but request 0 holds the worker until 300 ms.
    records = _records([1000.0, 1300.0, 1500.0], [300.0, 10.0, 10.0], [200, 200, 200])
    intended = np.array([0, 100_000_000, 500_000_000], dtype=np.int64)
    result = parse_replay(records, intended, 2.0, workers=1)
    assert result.generator == "replay" and result.requests == 3
    assert result.latency.max_ms == pytest.approx(300.0)  # request 0 itself
    uncorrected = result.latency_uncorrected
    assert uncorrected is not None and sorted([result.latency.mean_ms, uncorrected.mean_ms]) == \
        [uncorrected.mean_ms, result.latency.mean_ms]
    assert result.latency.mean_ms == pytest.approx((300 + 210 + 10) / 3)
    assert result.rate == pytest.approx(1.5)
    # offered at 0 and, having waited for the busy worker, at its 0.1 s; then 0.5; answered 0.30, 0.31, 0.51
    assert result.per_second == ((3, 3, 3, 1), (0, 0, 0, 0))


def test_unanswered_requests_are_errors_not_answers() -> None:
    records = _records([0.0, 500.0], [5.0, 5000.0], [200, 0])
    result = parse_replay(records, np.array([0, 500_000_000], dtype=np.int64), 1.0, workers=4)
    assert result.requests == 1 and result.socket_errors.read == 1
    assert result.per_second == ((2, 2, 1, 0),)


def test_a_replay_that_stopped_early_is_an_error() -> None:
    from pywebbench.loadgen.base import LoadGenError
    with pytest.raises(LoadGenError, match="1 of 2 scheduled"):
        parse_replay(_records([0.0], [1.0], [200]), np.array([0, 1], dtype=np.int64), 1.0)


def test_a_request_sent_after_the_windows_end_is_still_sent_and_answered() -> None:
    # due at 1.999 s of a 2 s window, sent 4 ms late (not queued: four free workers), answered at 2.010 s
    records = _records([0.0, 2003.0], [5.0, 7.0], [200, 200])
    result = parse_replay(records, np.array([0, 1_999_000_000], dtype=np.int64), 2.0, workers=4)
    assert result.per_second == ((1, 1, 1, 0), (1, 1, 1, 0))
