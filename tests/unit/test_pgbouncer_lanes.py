"""PgBouncer's lanes: one database entry per live server, each with its own cap."""

from __future__ import annotations

from pathlib import Path

from pywebbench.services.pgbouncer import lane_database, render_config
from pywebbench.services.postgres import PostgresInfo

INFO = PostgresInfo("127.0.0.1", 5555, "postgresql://x", "15", "", 100, 10, 1, 0.0, False)


def test_each_live_server_gets_its_own_lane_with_the_cap() -> None:
    text = render_config(INFO, 6000, 3, "session", "md5", Path("/tmp/u"), lanes=3)
    for lane in (1, 2, 3):
        assert f"{lane_database(lane)} = host=127.0.0.1 port=5555 dbname=bench" in text
    assert "max_db_connections = 3" in text and "server_idle_timeout = 2" in text


def test_one_server_keeps_the_single_database() -> None:
    single = render_config(INFO, 6000, 3, "session", "md5", Path("/tmp/u"))
    assert "bench_lane" not in single and "server_idle_timeout = 600" in single
