"""wrk takes whole seconds only: a shorter window is stopped by SIGINT on time and still reports."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.registry import make_generator
from pywebbench.core.procs import free_port


@pytest.fixture()
def static_server(tmp_path: Path) -> Iterator[str]:
    port = free_port("127.0.0.1")
    proc = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1"], cwd=tmp_path,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


@pytest.mark.parametrize("seconds", [0.3, 1.0])
def test_a_window_lasts_as_long_as_asked(static_server: str, tmp_path: Path, seconds: float) -> None:
    started = time.monotonic()
    result = make_generator("wrk").run(LoadRequest(url=static_server, connections=2, duration_s=seconds,
                                                   label=f"w{seconds}"), tmp_path)
    assert result.requests > 0 and result.errors == 0
    assert 0.9 * seconds <= result.duration_s < seconds + 0.25  # wrk's own clock from its start, reported after the stop
    assert time.monotonic() - started < seconds + 1.0
