"""The framework-free core of every benchmark app: the body of each CONTRACT.md endpoint.
What the contract fixes is pwb_contract.py's; the backends are pwb_sync.py's and
pwb_async.py's; this module is what the apps import (`import pwb_common as pwb`).

Framework modules stay thin: a route (pwb_routes.ROUTES names which) calls one function here
and wraps the bytes in its own response with the matching content type. Runs inside each stack's venv, so only the
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
import itertools
import json
import math
import os
import threading
import weakref
from collections.abc import Awaitable, Callable
from typing import Any

# What the apps and tests read through this module, re-exported by name.
from pwb_async import AsyncBackend as AsyncBackend
from pwb_contract import (
    APPLICATION_JSON as APPLICATION_JSON,
    ASYNC_DRIVERS as ASYNC_DRIVERS,
    HELLO as HELLO,
    POSTS_SQL as POSTS_SQL,
    SYNC_DRIVERS as SYNC_DRIVERS,
    TEMPLATE_CONTEXT as TEMPLATE_CONTEXT,
    TEMPLATE_NAME as TEMPLATE_NAME,
    TEMPLATES_DIR as TEMPLATES_DIR,
    TEXT_HTML as TEXT_HTML,
    TEXT_PLAIN as TEXT_PLAIN,
    Config as Config,
    config as config,
    is_async_driver as is_async_driver,
)
from pwb_sync import SyncBackend as SyncBackend
import pwb_runtime  # noqa: F401  - on a free-threaded build, answers the harness's GIL question


# --- bodies that need no backing service ---------------------------------------------------

# Calibration's known slowdown: this many iterations of an empty loop per /hello (0 = none).
# A fixed count, chosen by the harness: every worker of every launch does the same work (a
# count sized from a timing at start-up varied launch to launch), and no system call runs
# while a request spins (polling the thread's CPU clock slowed the rest of the request too).
SPIN_LOOPS = int(os.environ.get("PWB_EXTRA_WORK_LOOPS", "0") or 0)
# The share of requests that spin them (1 = every one): calibrate gives B the sizing probe's
# count on a share of its requests, so B does exactly the work the probe was measured doing
# (no assumption that a tenth as many loops cost a tenth as much).
SPIN_SHARE = float(os.environ.get("PWB_EXTRA_WORK_SHARE", "1") or 1)
_served = itertools.count()  # next() is atomic under the GIL: threaded workers lose no count


def _spin(loops: int) -> None:
    # CPU work, not sleep: the slowdown must cost the worker, like real per-request work.
    for _ in range(loops):
        pass


def spins_now(served: int, share: float) -> bool:
    """Whether request number `served` (from 0) of this process spins: evenly spread, so any
    n requests in a row spin n * share of them, give or take one."""
    return share >= 1.0 or math.floor((served + 1) * share) > math.floor(served * share)


def hello_body() -> bytes:
    if SPIN_LOOPS and spins_now(next(_served), SPIN_SHARE):
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


# --- A sync body as an asyncio app awaits it (pwb_routes.Route.on_loop) ---

AsyncBody = Callable[[], Awaitable[bytes]]


def on_loop(body: Callable[[], bytes]) -> AsyncBody:
    """A sync body run right on the event loop (blocking it while it runs)."""

    async def run() -> bytes:
        return body()

    return run
