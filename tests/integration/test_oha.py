"""oha against real stdlib servers: an open-loop run sees a stall that the send-time clock hides."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.oha import Oha
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.measure.verify import wait_ready


SUPPORT = Path(__file__).resolve().parents[1] / "support"
HOST = "127.0.0.1"
RATE = 1000.0
STALL_AFTER_S = 0.4
STALL_FOR_S = 1.0
WINDOW_S = 2.0


@contextmanager
def serving(script: str, *args: str, log_dir: Path) -> Iterator[int]:
    port = free_port()
    argv = [sys.executable, str(SUPPORT / script), "--port", str(port), *args]
    with ManagedProcess(argv, env={}, log_dir=log_dir, name=script) as proc:
        wait_ready(HOST, port, "/hello", timeout_s=10, alive=lambda: proc.poll() is None)
        yield port


def test_open_loop_reports_the_stall_that_send_time_latency_hides(tmp_path: Path) -> None:
    with serving("stall_server.py", "--stall-after", str(STALL_AFTER_S), "--stall-for", str(STALL_FOR_S),
                 log_dir=tmp_path) as port:
        request = LoadRequest(url=f"http://{HOST}:{port}/hello", connections=10, duration_s=WINDOW_S,
                              rate=RATE, label="open")
        result = Oha().run(request, tmp_path)

    assert result.generator == "oha" and result.rate == RATE
    assert result.errors == 0
    assert "--latency-correction" in result.command
    assert result.latency_uncorrected is not None
    corrected_p99 = result.latency.at(99)
    uncorrected_p99 = result.latency_uncorrected.at(99)
    assert corrected_p99 is not None and uncorrected_p99 is not None
    print(f"open loop {RATE:g} req/s: p99 corrected {corrected_p99:.1f} ms, uncorrected {uncorrected_p99:.1f} ms,"
          f" {result.rps:.0f} req/s achieved")
    # Requests scheduled during the 1 s freeze waited up to 1 s for a connection.
    assert 500 <= corrected_p99 <= 1000 * STALL_FOR_S + 300
    # Timed from when each actually went out, only the few caught mid-flight (10 of ~2,000) look slow.
    assert uncorrected_p99 < 100 and uncorrected_p99 * 5 < corrected_p99
    assert result.latency.max_ms >= result.latency_uncorrected.max_ms
    # The schedule was kept through the stall: achieved rate within 15% of the requested one.
    assert result.rps == pytest.approx(RATE, rel=0.15)
    assert result.requests == pytest.approx(RATE * WINDOW_S, rel=0.15)


def test_closed_loop_run_gives_a_sane_result(tmp_path: Path) -> None:
    with serving("hello_server.py", log_dir=tmp_path) as port:
        request = LoadRequest(url=f"http://{HOST}:{port}/hello", connections=4, duration_s=1.0, label="closed")
        result = Oha().run(request, tmp_path)

    assert result.rate is None and result.latency_uncorrected is None
    assert "-q" not in result.command and "--latency-correction" not in result.command
    assert result.errors == 0
    assert result.requests > 20
    assert result.duration_s == pytest.approx(1.0, abs=0.2)
    assert result.bytes_read == result.requests * len(b"Hello World!")
    points = [ms for _, ms in result.latency.percentiles]
    assert [p for p, _ in result.latency.percentiles][-1] == 100.0
    assert 0 < points[0] <= result.latency.mean_ms <= points[-1] == result.latency.max_ms < 1000
    assert points == sorted(points)
    # Closed loop, Little's law: each connection sends its next request when the last answers.
    assert result.rps == pytest.approx(request.connections / (result.latency.mean_ms / 1000), rel=0.25)


def test_fixed_count_at_a_rate_sends_exactly_that_many(tmp_path: Path) -> None:
    with serving("stall_server.py", "--stall-for", "0", log_dir=tmp_path) as port:
        request = LoadRequest(url=f"http://{HOST}:{port}/hello", connections=2, duration_s=1.0,
                              requests=300, rate=500.0, label="count")
        result = Oha().run(request, tmp_path)
    assert result.requests == 300 and result.errors == 0
    assert result.duration_s == pytest.approx(300 / 500, rel=0.2)
    assert result.latency_uncorrected is not None
