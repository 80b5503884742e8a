"""/db, /api, /posts and /upstream for WSGI stacks (`SyncBackend`, one per process): psycopg 3
or psycopg2 made cooperative for the server's worker model, a greenlet-safe pool, keep-alive
http.client connections to the upstream, read-only sqlite3 connections (see pwb_common)."""

from __future__ import annotations

import http.client
import os
import select
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from pwb_contract import (
    DB_SQL,
    INSERT_SQL,
    POSTS_SQL,
    ROWS_SQL,
    SYNC_DRIVERS,
    UPSTREAM_TIMEOUT_S,
    Config,
    api_json,
    db_json,
    posts_json,
)


class _GreenPool:
    """At most `size` psycopg2 connections; a caller finding none free waits on a pipe with
    the driver's own wait-for-readable, so only its greenlet blocks (meinheld has no
    cooperative locks to build a queue on). Not thread-safe: greenlets (or one thread) only."""

    def __init__(self, size: int, connect: Callable[[], Any], wait_readable: Callable[[int], None]) -> None:
        self._size = size
        self._connect = connect
        self._wait_readable = wait_readable
        self._idle: list[Any] = []
        self._opened = 0
        self._waiters: list[int] = []  # write ends of the waiting callers' pipes, FIFO

    def get(self) -> Any:
        while not self._idle and self._opened >= self._size:
            r, w = os.pipe()
            self._waiters.append(w)
            woken = False
            try:
                self._wait_readable(r)
                woken = True
            finally:
                if w in self._waiters:  # not chosen by put(): w must never be written to now
                    self._waiters.remove(w)
                elif not woken and self._waiters:  # killed after put() chose us: pass it on
                    os.write(self._waiters.pop(0), b"x")
                os.close(r)
                os.close(w)
        if self._idle:
            return self._idle.pop()
        self._opened += 1
        try:
            return self._connect()
        except BaseException:
            self._opened -= 1
            raise

    def put(self, conn: Any) -> None:
        if conn.closed:  # broken (e.g. PgBouncer dropped it): make room for a new one
            self._opened -= 1
        else:
            self._idle.append(conn)
        if self._waiters:
            os.write(self._waiters.pop(0), b"x")


def _block_until_readable(fd: int) -> None:
    select.select([fd], [], [])


def _meinheld_wait_callback(conn: Any) -> None:
    """psycopg2 wait callback parking the request's greenlet in meinheld's picoev loop."""
    import psycopg2
    from meinheld import server
    from psycopg2 import extensions

    while True:
        state = conn.poll()
        if state == extensions.POLL_OK:
            return
        if state == extensions.POLL_READ:
            server.trampoline(conn.fileno(), read=True)
        elif state == extensions.POLL_WRITE:
            server.trampoline(conn.fileno(), write=True)
        else:
            raise psycopg2.OperationalError(f"bad result from poll: {state!r}")


def _psycopg2_setup(driver: str) -> Callable[[int], None]:
    """Make psycopg2 (and, for meinheld, sockets) cooperative; return the wait-for-readable."""
    if driver == "psycopg2-gevent":
        import gevent.socket
        from psycogreen.gevent import patch_psycopg

        patch_psycopg()
        return gevent.socket.wait_read
    if driver == "psycopg2-eventlet":
        from eventlet.hubs import trampoline
        from psycogreen.eventlet import patch_psycopg

        patch_psycopg()  # eventlet.monkey_patch() already greens psycopg2; this makes it explicit
        return lambda fd: trampoline(fd, read=True)
    if driver == "psycopg2-meinheld":
        from meinheld import patch, server
        from psycopg2 import extensions

        extensions.set_wait_callback(_meinheld_wait_callback)
        # meinheld patches nothing by itself: its msocket makes http.client's socket
        # park the greenlet in the server's loop instead of blocking the process.
        patch.patch_socket()
        return lambda fd: server.trampoline(fd, read=True)
    return _block_until_readable  # plain psycopg2: blocking, on purpose


class _UpstreamClient:
    """Keep-alive http.client connections, LIFO, one per request in flight (like Go's client)."""

    def __init__(self, url: str) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"PWB_UPSTREAM_URL must be an http:// URL, got {url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
        self._idle: list[http.client.HTTPConnection] = []

    def get(self) -> bytes:
        for attempt in range(2):
            try:
                conn, reused = self._idle.pop(), True
            except IndexError:
                conn, reused = http.client.HTTPConnection(self.host, self.port, timeout=UPSTREAM_TIMEOUT_S), False
            try:
                conn.request("GET", self.target)
                resp = conn.getresponse()
                body = resp.read()
            except (ConnectionError, http.client.BadStatusLine):
                conn.close()
                if reused and attempt == 0:  # the upstream closed an idle keep-alive connection
                    continue
                raise
            except BaseException:
                conn.close()
                raise
            if resp.will_close:
                conn.close()
            else:
                self._idle.append(conn)
            if resp.status != 200:
                raise RuntimeError(f"upstream answered {resp.status}")
            return body
        raise AssertionError("unreachable")


class _SqliteReader:
    """Read-only sqlite3 connections kept open for the process's life (as seed 001's app kept
    its one), LIFO, one per read in flight: threads read in parallel (sqlite3 releases the GIL
    while it steps), and no connection is used by two threads at once.

    Under gevent, eventlet or meinheld the read is a C call the hub cannot switch away from:
    it blocks the worker while it runs. That is allowed, not patched over: a local SQLite read
    of 300 rows takes well under a millisecond, and it is what such an app would do; the
    recorded driver (sqlite3) says so."""

    def __init__(self, path: str) -> None:
        self._uri = Path(path).resolve().as_uri() + "?mode=ro"
        self._idle: list[sqlite3.Connection] = []

    def rows(self, sql: str) -> list[Any]:
        try:
            conn = self._idle.pop()
        except IndexError:
            conn = sqlite3.connect(self._uri, uri=True, check_same_thread=False)
        try:
            rows = conn.execute(sql).fetchall()
        except BaseException:
            conn.close()
            raise
        self._idle.append(conn)
        return rows


class SyncBackend:
    """/db, /api, /posts and /upstream for WSGI stacks; one per process."""

    def __init__(self, cfg: Config) -> None:
        if cfg.driver not in SYNC_DRIVERS:
            raise ValueError(f"PWB_DRIVER={cfg.driver!r} is not a sync driver ({', '.join(SYNC_DRIVERS)})")
        self.cfg = cfg
        self._pool: Any = None
        if cfg.driver == "psycopg":
            import psycopg

            # Literal SQL without parameters always goes as one simple Query message;
            # prepare_threshold=None also stops psycopg preparing repeated texts.
            self._connect: Callable[[], Any] = lambda: psycopg.connect(cfg.dsn, autocommit=True, prepare_threshold=None)
            if cfg.db_pool > 0:
                from psycopg_pool import ConnectionPool

                self._pool = ConnectionPool(
                    cfg.dsn, min_size=cfg.db_pool, max_size=cfg.db_pool, open=True,
                    kwargs={"autocommit": True, "prepare_threshold": None},
                )
        else:
            import psycopg2

            wait_readable = _psycopg2_setup(cfg.driver)

            def connect() -> Any:
                conn = psycopg2.connect(cfg.dsn)
                conn.autocommit = True
                return conn

            self._connect = connect
            if cfg.db_pool > 0:
                self._pool = _GreenPool(cfg.db_pool, connect, wait_readable)
        self._upstream = _UpstreamClient(cfg.upstream_url) if cfg.upstream_url else None
        self._sqlite = _SqliteReader(cfg.sqlite_path) if cfg.db == "sqlite" else None

    @contextmanager
    def _cursor(self) -> Iterator[Any]:
        """A cursor on a connection of our own: from the pool, or opened for this request only."""
        if self._pool is None:
            conn = self._connect()
            try:
                with conn.cursor() as cur:
                    yield cur
            finally:
                conn.close()
        elif isinstance(self._pool, _GreenPool):
            conn = self._pool.get()
            try:
                with conn.cursor() as cur:
                    yield cur
            finally:
                self._pool.put(conn)
        else:
            with self._pool.connection() as conn, conn.cursor() as cur:
                yield cur

    def db(self) -> bytes:
        sql = DB_SQL.format(delay=self.cfg.db_delay, key=self.cfg.random_key())
        with self._cursor() as cur:
            cur.execute(sql)
            a, b = cur.fetchone()
        return db_json(a, b)

    def api(self) -> bytes:
        with self._cursor() as cur:  # the write and the read on the same connection
            cur.execute(INSERT_SQL.format(key=self.cfg.random_key()))
            cur.execute(ROWS_SQL.format(limit=100))
            rows = cur.fetchall()
        return api_json(rows)

    def posts(self) -> bytes:
        if self._sqlite is not None:
            return posts_json(self._sqlite.rows(POSTS_SQL))
        with self._cursor() as cur:
            cur.execute(POSTS_SQL)
            rows = cur.fetchall()
        return posts_json(rows)

    def upstream(self) -> bytes:
        if self._upstream is None:
            raise RuntimeError("PWB_UPSTREAM_URL is not set")
        return self._upstream.get()
