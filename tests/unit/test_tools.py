"""One tool locator: known places first, then PATH, else missing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pywebbench.stage import tools


def _executable(path: Path) -> Path:
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_a_known_place_wins_over_path_and_path_is_the_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    known = _executable(tmp_path / "nginx")
    on_path = tmp_path / "bin"
    on_path.mkdir()
    _executable(on_path / "nginx")
    _executable(on_path / "wrk")
    monkeypatch.setenv("PATH", str(on_path))
    monkeypatch.setitem(tools.KNOWN_PLACES, "nginx", lambda: [tmp_path / "absent", known])
    assert tools.locate("nginx") == str(known)
    assert tools.locate("wrk") == str(on_path / "wrk")
    assert tools.locate("no-such-tool") is None


def test_a_known_place_that_is_not_executable_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain = tmp_path / "pgbouncer"
    plain.write_text("")
    monkeypatch.setenv("PATH", os.devnull)
    monkeypatch.setitem(tools.KNOWN_PLACES, "pgbouncer", lambda: [plain])
    assert tools.locate("pgbouncer") is None


def test_a_fallback_is_searched_only_after_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fallback = _executable(tmp_path / "go")
    on_path = tmp_path / "bin"
    on_path.mkdir()
    monkeypatch.setitem(tools.FALLBACKS, "go", lambda: [fallback])
    monkeypatch.setenv("PATH", str(on_path))
    assert tools.locate("go") == str(fallback)
    _executable(on_path / "go")
    assert tools.locate("go") == str(on_path / "go")
