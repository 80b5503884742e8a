"""The closed-loop settle before a window: few enough connections that what it leaves queued is small."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import pywebbench.measure.settle as settle_module
from pywebbench.catalog.protocols import Protocol
from pywebbench.loadgen.base import LoadRequest


def _argv_of_settle(request: LoadRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    started: list[list[str]] = []

    class Recorder:
        def __init__(self, argv: list[str], **_: Any) -> None:
            started.append(argv)

        def __enter__(self) -> Recorder:
            return self

        def __exit__(self, *exc: object) -> None:
            return None

    monkeypatch.setattr(settle_module, "ManagedProcess", Recorder)
    monkeypatch.setattr(settle_module.time, "sleep", lambda seconds: None)
    settle_module.settle_load(request, 0.25, tmp_path)
    assert len(started) == 1
    return started[0]


def test_a_settle_opens_at_most_its_cap_of_connections(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    many = _argv_of_settle(LoadRequest(url="http://127.0.0.1:1/cpu", connections=200, duration_s=4), tmp_path,
                           monkeypatch)
    assert many[many.index("--connections") + 1] == str(settle_module.SETTLE_CONNECTIONS)
    few = _argv_of_settle(LoadRequest(url="http://127.0.0.1:1/hello", connections=8, duration_s=4), tmp_path,
                          monkeypatch)
    assert few[few.index("--connections") + 1] == "8" and few[-1] == "http://127.0.0.1:1/hello"


def test_a_window_in_another_protocol_settles_with_h2load_speaking_it(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # an h2c nginx front answers no HTTP/1.1: wrk would settle nothing there
    request = LoadRequest(url="http://127.0.0.1:1/hello", connections=200, duration_s=4, protocol=Protocol.H2C)
    argv = _argv_of_settle(request, tmp_path, monkeypatch)
    assert "h2load" in argv and argv[argv.index("-c") + 1] == str(settle_module.SETTLE_CONNECTIONS)
    assert argv[argv.index("-D") + 1] == "2" and "--log-file=/dev/null" in argv and argv[-1] == request.url
    tls = _argv_of_settle(replace(request, url="https://127.0.0.1:1/hello", protocol=Protocol.H1_TLS), tmp_path,
                          monkeypatch)
    assert "h2load" in tls and "--h1" in tls
