"""Real PostgreSQL, PgBouncer and nginx: they start, answer, cap sessions, reset, and leave nothing."""

from __future__ import annotations

import http.client
import http.server
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import psutil
import psycopg
import pytest

from pywebbench.catalog.workloads import Needs
from pywebbench.plan.options import RunOptions
from pywebbench.services import ServiceError
from pywebbench.services.backing import Backing, BackingConfig
from pywebbench.services.nginx import NginxService
from pywebbench.services.pg_cache import CACHE_ENV
from pywebbench.services.pgbouncer import PgBouncerService
from pywebbench.services.postgres import PostgresConfig, PostgresService, bench_rows

ROWS = 20_000
DB_QUERY = "SELECT b.a, b.b FROM bench b, pg_sleep(%s) WHERE b.a = %s"


@pytest.fixture(scope="module")
def work_root() -> Iterator[Path]:
    # Not pytest's tmp_path: as root, PostgreSQL runs as `postgres`, who cannot enter
    # /tmp/pytest-of-root (0700).
    root = Path(tempfile.mkdtemp(prefix="pwb-services-"))
    root.chmod(0o755)
    yield root
    shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(scope="module")
def postgres(work_root: Path) -> Iterator[PostgresService]:
    with PostgresService(work_root / "postgres", PostgresConfig(rows=ROWS, seed=7, max_db_sessions=20)) as pg:
        yield pg


def children(besides: frozenset[int] | set[int] = frozenset()) -> set[int]:
    """Our descendants' pids, less `besides` (the module's PostgreSQL, for one)."""
    return {p.pid for p in psutil.Process().children(recursive=True)} - besides


def assert_gone(pids: set[int]) -> None:
    assert pids, "the service started no process"
    deadline = time.monotonic() + 5
    left = pids
    while left and time.monotonic() < deadline:
        left = {pid for pid in left if _alive(pid)}
        time.sleep(0.05)
    assert not left, f"left running: {sorted(left)}"


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def until(predicate: Callable[[], bool], timeout_s: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def test_a_second_run_starts_on_the_kept_cluster(work_root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Runs keep their PostgreSQL cluster per row count (services/pg_cache.py): the second run
    skips initdb and the load; a cluster whose files were damaged is built again."""
    monkeypatch.setenv(CACHE_ENV, str(work_root / "kept"))
    config = BackingConfig(needs=frozenset({Needs.DATABASE}), settings=RunOptions(db_rows=3_000).services,
                           measure_upstream_ceiling=False)
    kept = work_root / "kept" / "rows3000-seed0" / "cluster"
    with Backing(config, work_root / "cache") as first:
        assert first.postgres is not None and not first.postgres.info.reused
        assert first.postgres.work_dir == kept
    started = time.monotonic()
    with Backing(config, work_root / "cache") as second:
        assert second.postgres is not None and second.postgres.info.reused
        with psycopg.connect(second.postgres.info.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM bench").fetchone() == (3_000,)
    assert time.monotonic() - started < 60
    (kept / "data" / "global" / "pg_control").write_bytes(b"damaged")
    with Backing(config, work_root / "cache") as third:
        assert third.postgres is not None and not third.postgres.info.reused


def test_postgres_loads_rows_then_reuses_the_cluster(work_root: Path) -> None:
    before = children()
    config = PostgresConfig(rows=5_000, seed=3)
    work_dir = work_root / "reuse"
    with PostgresService(work_dir, config) as pg:
        assert not pg.info.reused and pg.info.rows == 5_000 and pg.info.load_seconds > 0
        assert pg.info.version.startswith("postgres (PostgreSQL)")
        assert f"port = {pg.info.port}" in pg.info.config_text
        with psycopg.connect(pg.info.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT count(*), min(a), max(a) FROM bench").fetchone() == (5_000, 1, 5_000)
            first = conn.execute("SELECT b FROM bench WHERE a = 1").fetchone()
            conn.execute("INSERT INTO writes (a) VALUES (1)")
        pids = children(before)
        first_dsn = pg.info.dsn
    assert_gone(pids)
    # A new start (a new config: a new password) reuses the data; the last password is void.
    with PostgresService(work_dir, PostgresConfig(rows=5_000, seed=3)) as pg:
        assert pg.info.reused and pg.info.dsn != first_dsn
        with pytest.raises(psycopg.OperationalError):
            psycopg.connect(first_dsn.replace(f":{first_dsn.rsplit(':', 1)[1].split('/')[0]}/",
                                              f":{pg.info.port}/"), connect_timeout=5)
        with psycopg.connect(pg.info.dsn, autocommit=True) as conn:
            assert conn.execute("SELECT b FROM bench WHERE a = 1").fetchone() == first
            assert conn.execute("SELECT count(*) FROM writes").fetchone() == (0,)
        pids = children(before)
    assert_gone(pids)


def test_rows_are_reproducible_and_well_formed() -> None:
    text = b"".join(bench_rows(2_500, seed=11, chunk_rows=1_000))
    assert text == b"".join(bench_rows(2_500, seed=11, chunk_rows=333))
    lines = text.decode().splitlines()
    assert len(lines) == 2_500 and lines[0].startswith("1\t") and lines[-1].startswith("2500\t")
    assert all(len(b) == 20 and b.isascii() and b.islower() and b.isalpha() for _, b in (ln.split("\t") for ln in lines))
    # A longer table only appends: row k is the same whatever the table size.
    assert b"".join(bench_rows(3_000, seed=11)).startswith(text)


def test_db_query_answers_through_pgbouncer(postgres: PostgresService, work_root: Path) -> None:
    before = children()
    with psycopg.connect(postgres.info.dsn) as conn:
        assert conn.execute("SELECT count(*) FROM bench").fetchone() == (ROWS,)
    with PgBouncerService(work_root / "bouncer-db", postgres.info, max_db_sessions=5) as bouncer:
        # A fresh random password per start, the same one PostgreSQL got; never the old constant.
        password = postgres.info.password
        assert len(password) >= 32 and password != "bench"
        assert bouncer.info.dsn == f"postgresql://bench:{password}@127.0.0.1:{bouncer.info.port}/bench"
        assert bouncer.info.version.startswith("PgBouncer")
        assert "max_db_connections = 5" in bouncer.info.config_text
        with psycopg.connect(bouncer.info.dsn) as conn:
            row = conn.execute(DB_QUERY, (0.02, 1234)).fetchone()
        assert row is not None and row[0] == 1234 and len(row[1]) == 20
        body = json.dumps({"a": f"{row[0]:010d}", "b": row[1]})
        assert body.startswith('{"a": "0000001234", "b": "')
        pids = children(before)
    assert_gone(pids)


def test_scram_clients_and_a_cap_beyond_postgres(postgres: PostgresService, work_root: Path) -> None:
    with pytest.raises(ValueError, match="max_connections"):
        PgBouncerService(work_root / "bouncer-big", postgres.info, max_db_sessions=postgres.info.max_connections)
    with PgBouncerService(work_root / "bouncer-scram", postgres.info, 2, "transaction", auth_type="scram-sha-256") as b:
        assert "auth_type = scram-sha-256" in b.info.config_text and "pool_mode = transaction" in b.info.config_text
        with psycopg.connect(b.info.dsn, autocommit=True) as conn:
            assert conn.execute(DB_QUERY, (0, 7)).fetchone() is not None


def test_server_sessions_follow_held_clients_and_reset_to_zero(postgres: PostgresService, work_root: Path) -> None:
    with PgBouncerService(work_root / "bouncer-held", postgres.info, max_db_sessions=10) as bouncer:
        assert bouncer.server_sessions() == 0
        clients = [psycopg.connect(bouncer.info.dsn, autocommit=True) for _ in range(5)]
        for conn in clients:
            conn.execute("SELECT 1")
        assert bouncer.server_sessions() == 5
        assert bouncer.pools().clients_active == 5
        assert postgres.backend_sessions() == 5
        for conn in clients:
            conn.close()
        # Session mode keeps the released server sessions, idle, for the next clients.
        assert until(lambda: bouncer.pools().clients_active == 0)
        assert bouncer.server_sessions() == 5
        assert bouncer.reset_pool() == 0
        assert bouncer.server_sessions() == 0
        assert until(lambda: postgres.backend_sessions() == 0)


def test_reset_pool_drops_clients_that_still_hold_sessions(postgres: PostgresService, work_root: Path) -> None:
    with PgBouncerService(work_root / "bouncer-kill", postgres.info, max_db_sessions=10) as bouncer:
        clients = [psycopg.connect(bouncer.info.dsn, autocommit=True) for _ in range(3)]
        for conn in clients:
            conn.execute("SELECT 1")
        assert bouncer.reset_pool(timeout_s=0.5) == 3
        assert bouncer.server_sessions() == 0
        assert until(lambda: postgres.backend_sessions() == 0)
        with psycopg.connect(bouncer.info.dsn) as conn:  # the database is resumed
            assert conn.execute("SELECT 1").fetchone() == (1,)
        for conn in clients:
            conn.close()


def test_cap_holds_and_extra_clients_wait(postgres: PostgresService, work_root: Path) -> None:
    with PgBouncerService(work_root / "bouncer-cap", postgres.info, max_db_sessions=3) as bouncer:
        errors: list[BaseException] = []
        answered: list[int] = []

        def client(key: int) -> None:
            try:
                with psycopg.connect(bouncer.info.dsn, autocommit=True) as conn:
                    row = conn.execute(DB_QUERY, (0.3, key)).fetchone()
                    answered.append(row[0] if row else -1)
            except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
                errors.append(exc)

        threads = [threading.Thread(target=client, args=(key,)) for key in range(1, 9)]
        for thread in threads:
            thread.start()
        servers, backends, waiting = [], [], []
        while any(t.is_alive() for t in threads):
            snapshot = bouncer.pools()
            servers.append(bouncer.server_sessions())
            backends.append(postgres.backend_sessions())
            waiting.append(snapshot.clients_waiting)
            time.sleep(0.02)
        for thread in threads:
            thread.join()
        assert errors == []
        assert sorted(answered) == list(range(1, 9))
        assert max(servers) == 3 and max(backends) <= 3
        assert max(waiting) > 0


def test_failed_start_unwinds_and_says_why(work_root: Path) -> None:
    before = children()
    with pytest.raises(ServiceError) as caught:
        with PostgresService(work_root / "broken", PostgresConfig(rows=10, shared_buffers="lots")):
            pass
    assert caught.value.message.startswith("PostgreSQL exited")
    assert "shared_buffers" in caught.value.log_tail
    assert children() <= before


@pytest.mark.skipif(os.geteuid() != 0, reason="only root hands PostgreSQL to another user")
def test_unreachable_work_dir_is_refused_early(tmp_path: Path) -> None:
    assert tmp_path.parent.parent.stat().st_mode & 0o777 == 0o700  # pytest-of-root, as pytest makes it
    with pytest.raises(ServiceError, match="cannot reach"):
        with PostgresService(tmp_path / "pg", PostgresConfig(rows=10)):
            pass


class _Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    peers: list[tuple[str, int]] = []

    def do_GET(self) -> None:
        _Upstream.peers.append(self.client_address)
        body = f"upstream {self.path}".encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        pass


def test_nginx_serves_static_and_proxies_with_keepalive(work_root: Path) -> None:
    before = children()
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        body = b"<p>static</p>"
        with NginxService(work_root / "nginx", static_body=body, upstream_port=upstream.server_address[1]) as nginx:
            assert nginx.info.version.startswith("nginx version:")
            assert "proxy_http_version 1.1;" in nginx.info.config_text
            conn = http.client.HTTPConnection(nginx.info.host, nginx.info.port, timeout=5)
            conn.request("GET", "/static")
            response = conn.getresponse()
            assert (response.status, response.read()) == (200, body)
            assert response.getheader("Content-Type") == "text/plain; charset=utf-8"
            for _ in range(5):
                conn.request("GET", "/hello")
                response = conn.getresponse()
                assert (response.status, response.read()) == (200, b"upstream /hello")
            conn.close()
            assert len(set(_Upstream.peers)) == 1, "nginx did not keep its upstream connection alive"
            pids = children(before)
        assert_gone(pids)
    finally:
        upstream.shutdown()
        upstream.server_close()


def test_nginx_alone_serves_the_baseline(work_root: Path) -> None:
    before = children()
    with NginxService(work_root / "nginx-alone", static_body=None, upstream_port=None, workers=2) as nginx:
        conn = http.client.HTTPConnection(nginx.info.host, nginx.info.port, timeout=5)
        conn.request("GET", "/static")
        assert conn.getresponse().read() == b"Hello World!"
        conn.request("GET", "/other")
        assert conn.getresponse().status == 404
        conn.close()
        pids = children(before)
        assert len(pids) == 3  # master and two workers
    assert_gone(pids)


def test_nginx_failed_start_says_why(work_root: Path) -> None:
    before = children()
    with pytest.raises(ServiceError) as caught:
        with NginxService(work_root / "nginx-broken", static_body=b"x", upstream_port=0):
            pass
    assert caught.value.message.startswith("nginx exited")
    assert "emerg" in caught.value.log_tail
    assert children() <= before
