"""The framework-free core of every benchmark app: the body of each CONTRACT.md endpoint.

Framework modules stay thin: a route calls one function here and wraps the bytes in its
own response with the matching content type. Runs inside each stack's venv, so only the
standard library is imported up front; Jinja2 and the driver chosen by PWB_DRIVER load on
first use:

- ``psycopg``: psycopg 3 (psycopg_pool when PWB_DB_POOL > 0) and http.client (threads).
- ``psycopg2-gevent`` / ``psycopg2-eventlet``: psycopg2 with psycogreen's wait callback;
  the server worker has already monkey-patched the stdlib, so http.client cooperates too.
- ``psycopg2-meinheld``: psycopg2 with a wait callback on meinheld's trampoline, and
  meinheld's cooperative socket patched in for http.client. Needs meinheld built against
  greenlet 3's own greenlet.h: the PyPI sdist's bundled 0.4 header breaks trampoline().
- ``psycopg2``: plain, blocking psycopg2 (pool only on single-threaded servers): the
  seed-000 bug, kept for the contrast test.
- ``asyncpg``: asyncpg and one aiohttp ClientSession per event loop (the *_async functions).

With PWB_DB=sqlite, /posts reads the SQLite file PWB_SQLITE_PATH instead (seed 001's DB):
through the standard library's sqlite3 under a sync driver, and through ``databases`` over
aiosqlite (the client seed 001's Starlette app used) under an async one. /db and /api stay
on PostgreSQL, which only they need (pg_sleep, the writes table).

Sync: ``db() api() posts() upstream()``; async: ``db_async() api_async() posts_async()
upstream_async()``; all return the body bytes and raise on any failure (the framework
turns that into a 500). Backends are created per process on first use, never before a
fork: connections, pools and sessions are never shared between workers.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import os
import random
import select
import sqlite3
import threading
import time
import weakref
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

TEXT_PLAIN = "text/plain; charset=utf-8"
APPLICATION_JSON = "application/json"
TEXT_HTML = "text/html; charset=utf-8"

HELLO = b"Hello World!"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "page.html"
TEMPLATE_CONTEXT: dict[str, Any] = json.loads((TEMPLATES_DIR / "context.json").read_text(encoding="utf-8"))

SYNC_DRIVERS = ("psycopg", "psycopg2", "psycopg2-gevent", "psycopg2-eventlet", "psycopg2-meinheld")
ASYNC_DRIVERS = ("asyncpg",)
UPSTREAM_TIMEOUT_S = 60.0

# Literal SQL, as the Go reference sends it: one simple-protocol round trip with psycopg
# and psycopg2, and valid behind PgBouncer in any pool mode. KEY and DELAY are ours, not input.
DB_SQL = "SELECT b.a, b.b FROM bench b, pg_sleep({delay}) WHERE b.a = {key}"
INSERT_SQL = "INSERT INTO writes (a) VALUES ({key})"
ROWS_SQL = "SELECT a, b FROM bench WHERE a <= {limit} ORDER BY a"
POSTS_SQL = ROWS_SQL.format(limit=300)  # the same text on PostgreSQL and SQLite
# asyncpg always prepares (extended protocol); parameters let its per-connection statement
# cache hit, so a pooled connection answers /db in one round trip.
DB_SQL_ASYNCPG = "SELECT b.a, b.b FROM bench b, pg_sleep($1) WHERE b.a = $2"


@dataclass(frozen=True)
class Config:
    driver: str
    dsn: str
    db_delay: float
    db_rows: int
    db_pool: int
    upstream_url: str
    cpu_size: int
    db: str = "postgresql"
    sqlite_path: str = ""

    @classmethod
    def from_env(cls) -> Config:
        cfg = cls(
            driver=os.environ.get("PWB_DRIVER") or "psycopg",
            dsn=os.environ.get("PWB_DSN", ""),
            db_delay=float(os.environ.get("PWB_DB_DELAY") or "0.02"),
            db_rows=int(os.environ.get("PWB_DB_ROWS") or "1000000"),
            db_pool=int(os.environ.get("PWB_DB_POOL") or "0"),
            upstream_url=os.environ.get("PWB_UPSTREAM_URL", ""),
            cpu_size=int(os.environ.get("PWB_CPU_SIZE") or "100000"),
            db=os.environ.get("PWB_DB") or "postgresql",
            sqlite_path=os.environ.get("PWB_SQLITE_PATH", ""),
        )
        if cfg.driver not in SYNC_DRIVERS + ASYNC_DRIVERS:
            raise ValueError(f"PWB_DRIVER must be one of {', '.join(SYNC_DRIVERS + ASYNC_DRIVERS)}, got {cfg.driver!r}")
        if cfg.db not in ("postgresql", "sqlite") or (cfg.db == "sqlite" and not cfg.sqlite_path):
            raise ValueError(f"PWB_DB must be postgresql or sqlite (with PWB_SQLITE_PATH), got {cfg.db!r}")
        if cfg.db_delay < 0 or cfg.db_rows < 1 or cfg.db_pool < 0 or cfg.cpu_size < 0:
            raise ValueError(f"bad PWB_* settings: {cfg}")
        return cfg

    def random_key(self) -> int:
        # random reseeds itself in a forked child, so workers draw different keys.
        return random.randrange(1, self.db_rows + 1)


@cache
def config() -> Config:
    return Config.from_env()


def is_async_driver() -> bool:
    return config().driver in ASYNC_DRIVERS


# --- bodies that need no backing service ---------------------------------------------------

# Calibration's known slowdown: this many iterations of an empty loop per /hello (0 = none).
# A fixed count, chosen by the harness: every worker of every launch does the same work (a
# count sized from a timing at start-up varied launch to launch), and no system call runs
# while a request spins (polling the thread's CPU clock slowed the rest of the request too).
SPIN_LOOPS = int(os.environ.get("PWB_EXTRA_WORK_LOOPS", "0") or 0)


def _spin(loops: int) -> None:
    # CPU work, not sleep: the slowdown must cost the worker, like real per-request work.
    for _ in range(loops):
        pass


def hello_body() -> bytes:
    if SPIN_LOOPS:
        _spin(SPIN_LOOPS)
    return HELLO


def count_primes(n: int) -> int:
    """Primes p < n by a sieve of Eratosthenes in plain Python loops (the Go reference's CountPrimes)."""
    if n < 3:
        return 0
    composite = bytearray(n)
    count = 0
    for i in range(2, n):
        if not composite[i]:
            count += 1
            if i * i < n:
                for j in range(i * i, n, i):
                    composite[j] = 1
    return count


def cpu_body() -> bytes:
    n = config().cpu_size
    return json.dumps({"n": n, "primes": count_primes(n)}).encode()


_template: Any = None


def template_body() -> bytes:
    global _template
    if _template is None:  # one Environment per process; compiling is not what we measure
        import jinja2

        env = jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES_DIR), autoescape=True, auto_reload=False)
        _template = env.get_template(TEMPLATE_NAME)
    return str(_template.render(TEMPLATE_CONTEXT)).encode()


# --- JSON bodies from rows (exactly json.dumps of the CONTRACT.md objects) --------------------

def db_json(a: int, b: str) -> bytes:
    return json.dumps({"a": f"{a:010d}", "b": b}).encode()


def api_json(rows: Any) -> bytes:
    items = [{"a": a, "b": b} for a, b in rows if "a" <= b[:1] <= "m"]
    return json.dumps({"count": len(items), "items": items}).encode()


def posts_json(rows: Any) -> bytes:
    return json.dumps([{"id": a, "title": b} for a, b in rows]).encode()


# --- sync backend --------------------------------------------------------------------------

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


# --- async backend -------------------------------------------------------------------------

class AsyncBackend:
    """/db, /api, /posts and /upstream for ASGI stacks (asyncpg + aiohttp); one per event loop."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._pool: Any = None
        self._session: Any = None
        self._sqlite: Any = None  # a databases.Database, connected on first use
        self._lock = asyncio.Lock()  # binds to the loop on first use (Python >= 3.10)

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[Any]:
        import asyncpg

        if self.cfg.db_pool == 0:
            conn = await asyncpg.connect(self.cfg.dsn)
            try:
                yield conn
            finally:
                await conn.close()
            return
        if self._pool is None:
            async with self._lock:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(
                        self.cfg.dsn, min_size=self.cfg.db_pool, max_size=self.cfg.db_pool)
        async with self._pool.acquire() as conn:
            yield conn

    async def db(self) -> bytes:
        async with self._conn() as conn:
            row = await conn.fetchrow(DB_SQL_ASYNCPG, self.cfg.db_delay, self.cfg.random_key())
        return db_json(row[0], row[1])

    async def api(self) -> bytes:
        async with self._conn() as conn:
            await conn.execute(INSERT_SQL.format(key=self.cfg.random_key()))  # no args: simple protocol
            rows = await conn.fetch(ROWS_SQL.format(limit=100))
        return api_json(rows)

    async def posts(self) -> bytes:
        if self.cfg.db == "sqlite":
            database = await self._sqlite_database()
            records = await database.fetch_all(POSTS_SQL)
            return posts_json((r[0], r[1]) for r in records)
        async with self._conn() as conn:
            rows = await conn.fetch(POSTS_SQL)
        return posts_json(rows)

    async def _sqlite_database(self) -> Any:
        """Seed 001's Starlette client: one `databases.Database` per loop, connected once."""
        if self._sqlite is None:
            async with self._lock:
                if self._sqlite is None:
                    import databases

                    database = databases.Database("sqlite+aiosqlite:///" + str(Path(self.cfg.sqlite_path).resolve()))
                    await database.connect()
                    self._sqlite = database
        return self._sqlite

    async def upstream(self) -> bytes:
        if not self.cfg.upstream_url:
            raise RuntimeError("PWB_UPSTREAM_URL is not set")
        if self._session is None:  # created inside the running loop it belongs to
            import aiohttp

            # limit=0: no cap on connections per host, one per request in flight, like Go's client.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=UPSTREAM_TIMEOUT_S),
            )
        async with self._session.get(self.cfg.upstream_url) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"upstream answered {resp.status}")
        return bytes(body)

    async def aclose(self) -> None:
        """For ASGI lifespan shutdown: close the pool and the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self._sqlite is not None:
            await self._sqlite.disconnect()
            self._sqlite = None


# --- per-process (and per-loop) backends, created on first use -----------------------------

_sync: tuple[int, SyncBackend] | None = None
_sync_lock = threading.Lock()
_async: tuple[int, weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, AsyncBackend]] | None = None


def sync_backend() -> SyncBackend:
    global _sync
    pid = os.getpid()
    if _sync is None or _sync[0] != pid:  # never reuse a backend inherited through fork
        with _sync_lock:
            if _sync is None or _sync[0] != pid:
                _sync = (pid, SyncBackend(config()))
    return _sync[1]


def async_backend() -> AsyncBackend:
    global _async
    loop = asyncio.get_running_loop()
    pid = os.getpid()
    if _async is None or _async[0] != pid:
        _async = (pid, weakref.WeakKeyDictionary())
    backend = _async[1].get(loop)
    if backend is None:
        backend = _async[1][loop] = AsyncBackend(config())
    return backend


def db() -> bytes:
    return sync_backend().db()


def api() -> bytes:
    return sync_backend().api()


def posts() -> bytes:
    return sync_backend().posts()


def upstream() -> bytes:
    return sync_backend().upstream()


async def db_async() -> bytes:
    return await async_backend().db()


async def api_async() -> bytes:
    return await async_backend().api()


async def posts_async() -> bytes:
    return await async_backend().posts()


async def upstream_async() -> bytes:
    return await async_backend().upstream()


async def aclose_async() -> None:
    """Close this loop's pool and session (call from an ASGI lifespan shutdown)."""
    if _async is not None and _async[0] == os.getpid():
        backend = _async[1].pop(asyncio.get_running_loop(), None)
        if backend is not None:
            await backend.aclose()


# --- The endpoint table every asyncio app serves (one place, not nine copies) ---

AsyncBody = Callable[[], Awaitable[bytes]]


def on_loop(body: Callable[[], bytes]) -> AsyncBody:
    """A sync body run right on the event loop (blocking it while it runs)."""

    async def run() -> bytes:
        return body()

    return run


def async_endpoints() -> dict[str, tuple[AsyncBody, str]]:
    """Path -> (coroutine returning the body, content type) for asyncio frameworks.

    With an async driver the service endpoints await asyncpg/aiohttp; with a sync one
    (seed 001's "sync DB client inside Starlette") they block the loop, on purpose.
    """
    def service(async_body: AsyncBody, sync_body: Callable[[], bytes]) -> AsyncBody:
        return async_body if is_async_driver() else on_loop(sync_body)

    return {
        "/hello": (on_loop(hello_body), TEXT_PLAIN),
        "/db": (service(db_async, db), APPLICATION_JSON),
        "/upstream": (service(upstream_async, upstream), APPLICATION_JSON),
        "/template": (on_loop(template_body), TEXT_HTML),
        "/api": (service(api_async, api), APPLICATION_JSON),
        "/posts": (service(posts_async, posts), APPLICATION_JSON),
        "/cpu": (on_loop(cpu_body), APPLICATION_JSON),
    }
