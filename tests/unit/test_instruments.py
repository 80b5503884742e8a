"""Side measurements that fail say so: the keep-alive probe, the #DB sampler, the ceiling."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from pywebbench.measure.ceiling import NO_CEILING, GeneratorCeiling
from pywebbench.measure.checks import Check, instrument_check
from support.fake_loadgen import FakeLoadGenerator
from pywebbench.core.procs import free_port
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services.backing import PeakSampler
from pywebbench.measure.verify import keeps_alive
pytestmark = pytest.mark.serial  # reads CPU time or waits on the clock: never beside a test worker



def _handler(protocol: str) -> type[BaseHTTPRequestHandler]:
    class Hello(BaseHTTPRequestHandler):
        protocol_version = protocol

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    return Hello


@contextmanager
def _server(protocol: str) -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(protocol))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()


def test_keep_alive_is_on_off_or_unknown_with_its_cause() -> None:
    with _server("HTTP/1.1") as port:
        assert keeps_alive("127.0.0.1", port, "/") == (True, None)
    with _server("HTTP/1.0") as port:
        assert keeps_alive("127.0.0.1", port, "/") == (False, None)
    answer, problem = keeps_alive("127.0.0.1", free_port(), "/")  # nothing listens: not "off"
    assert answer is None and problem is not None and "first request failed" in problem


def test_a_failing_gauge_leaves_its_first_cause_beside_a_partial_peak() -> None:
    values = iter([1, 3, None])

    def read() -> int | None:
        try:
            return next(values)
        except StopIteration:
            raise ConnectionError("pgbouncer went away\nsecond line") from None

    with PeakSampler(read, interval_s=0.001) as sampler:
        deadline = time.monotonic() + 5
        while sampler.error is None and time.monotonic() < deadline:
            time.sleep(0.005)
    assert sampler.peak == 3
    assert sampler.error == "ConnectionError: pgbouncer went away"
    assert instrument_check("#DB sampler", sampler.error) == (
        f"{Check.INSTRUMENT}: #DB sampler: ConnectionError: pgbouncer went away",)
    assert instrument_check("#DB sampler", None) == ()


def test_a_ceiling_that_cannot_be_measured_is_a_recorded_problem_not_an_absence(tmp_path: Path) -> None:
    records: list[ServiceRecord] = []
    spec = TrialSpec("t", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "fake", stack_cpus=(1,),
                     loadgen_cpus=(0,))
    # nginx cannot start in a work directory that is a file
    blocker = tmp_path / "ceiling"
    blocker.write_text("not a directory")
    ceiling = GeneratorCeiling(FakeLoadGenerator(), blocker, on_record=records.append)
    reading = ceiling(spec)
    assert reading.rps is None and reading.problem
    assert [r.name for r in records] == ["generator-ceiling"] and records[0].config["error"] == reading.problem
    assert ceiling(TrialSpec("o", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "oha", rate=100.0)) is NO_CEILING
