"""The kept PostgreSQL cluster's directory: one per row count and seed, held by one run at a time."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pywebbench.services.pg_cache import CACHE_ENV, forget, kept_cluster


def test_a_run_holds_the_kept_cluster_and_a_second_one_at_the_same_time_gets_none(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "kept"))
    with kept_cluster(1000, 0) as first:
        assert first == tmp_path / "kept" / "rows1000-seed0" / "cluster"
        with kept_cluster(1000, 0) as second:
            assert second is None  # held: that run makes a fresh cluster of its own
        with kept_cluster(2000, 0) as other:
            assert other is not None and other.parent.name == "rows2000-seed0"
    with kept_cluster(1000, 0) as again:
        assert again == first  # released at the end of the run
    for path in (tmp_path / "kept", tmp_path / "kept" / "rows1000-seed0"):
        assert stat.S_IMODE(path.stat().st_mode) == 0o711  # PostgreSQL's user passes through, lists nothing


def test_off_keeps_none_and_forget_removes_a_cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(CACHE_ENV, "off")
    with kept_cluster(1000, 0) as none:
        assert none is None
    cluster = tmp_path / "cluster"
    (cluster / "data").mkdir(parents=True)
    forget(cluster)
    assert not cluster.exists()
