"""Seed 001's SQLite database: the file holds PostgreSQL's rows, the apps read them back exactly,
and `--db sqlite` picks the client each concurrency model reads through."""

from __future__ import annotations

import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.presets import check_preset, get_preset
from pywebbench.services.postgres import bench_rows
from pywebbench.services.sqlite import POSTS_ROWS, fill_sqlite, read_posts, sqlite_rows
from pywebbench.catalog.workloads import posts_body


def _postgres_rows(rows: int, seed: int) -> list[tuple[int, str]]:
    """What PostgreSQL's COPY loads: bench_rows parsed the way COPY text reads."""
    out = []
    for chunk in bench_rows(rows, seed):
        for line in chunk.decode().splitlines():
            a, b = line.split("\t")
            out.append((int(a), b))
    return out


def test_the_sqlite_file_holds_postgresqls_first_rows(tmp_path: Path) -> None:
    path = tmp_path / "posts.sqlite3"
    fill_sqlite(path, rows=1_000_000, seed=0)
    stored = read_posts(path)
    # PostgreSQL loads a million rows in 10,000-row chunks; row k is the same either way.
    expected = _postgres_rows(20_000, 0)[:POSTS_ROWS]
    assert stored == expected and len(stored) == 300
    assert all(len(b) == 20 and b.isascii() and b.islower() for _, b in stored)
    assert posts_body(stored) == posts_body(expected)


def test_fewer_rows_and_another_seed_follow_postgresql_too(tmp_path: Path) -> None:
    fill_sqlite(tmp_path / "a.sqlite3", rows=50, seed=7)
    assert read_posts(tmp_path / "a.sqlite3") == _postgres_rows(50, 7)
    assert sqlite_rows(300, 7) != sqlite_rows(300, 0)


def test_an_existing_file_is_never_refilled(tmp_path: Path) -> None:
    path = tmp_path / "posts.sqlite3"
    path.write_bytes(b"not ours")
    with pytest.raises(FileExistsError):
        fill_sqlite(path, rows=300)


def test_the_sync_app_reads_the_same_bytes_from_sqlite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "posts.sqlite3"
    fill_sqlite(path, rows=1000)
    monkeypatch.syspath_prepend(str(APPS_DIR))
    import pwb_common

    cfg = replace(pwb_common.Config.from_env(), db="sqlite", sqlite_path=str(path))
    backend = pwb_common.SyncBackend(cfg)
    assert backend.posts() == posts_body(read_posts(path))
    assert backend.posts() == backend.posts()  # the kept connection answers again
    sys.modules.pop("pwb_common", None)


def test_db_sqlite_picks_sqlite3_for_sync_and_greenlet_stacks_and_databases_for_coroutines() -> None:
    catalog = build_catalog()
    flask = replace(catalog.resolve("flask:gunicorn-sync"), db="sqlite")
    gevent = replace(catalog.resolve("flask:gunicorn-gevent"), db="sqlite")
    starlette = replace(catalog.resolve("starlette:uvicorn"), db="sqlite")
    sync_client = replace(starlette, driver_override="psycopg")
    assert (flask.db_client, gevent.db_client, starlette.db_client, sync_client.db_client) == (
        "sqlite3", "sqlite3", "databases-aiosqlite", "sqlite3")
    assert any(r.startswith("databases==") for r in starlette.requirements)
    assert any(r.startswith("aiosqlite==") for r in starlette.requirements)
    assert not any(r.startswith("databases==") for r in flask.requirements + sync_client.requirements)
    # PostgreSQL (the default) records the driver itself, as before.
    assert catalog.resolve("starlette:uvicorn").db_client == "asyncpg"


def test_db_option_is_checked() -> None:
    assert RunOptions(db="sqlite").validate().db == "sqlite"
    with pytest.raises(UserError, match="--db must be one of postgresql, sqlite"):
        RunOptions(db="mysql").validate()


def test_seed001_presets_read_sqlite_and_keep_a_postgresql_pair() -> None:
    catalog = build_catalog()
    for name, db in (("seed001", "sqlite"), ("seed001-sync-client", "sqlite"),
                     ("seed001-postgresql", "postgresql"), ("seed001-sync-client-postgresql", "postgresql")):
        preset = get_preset(name)
        assert preset.options["db"] == db, name
        assert check_preset(preset, catalog).db == db


def test_db_sqlite_refuses_the_workloads_only_postgresql_can_serve() -> None:
    assert RunOptions(db="sqlite", workloads=("hello", "upstream", "posts")).validate().db == "sqlite"
    with pytest.raises(UserError, match="db and api need PostgreSQL"):
        RunOptions(db="sqlite", workloads=("posts", "db")).validate()
