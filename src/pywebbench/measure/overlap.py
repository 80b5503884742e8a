"""The no-overlap check's arithmetic: what N concurrent waits should take on a correct stack.

Seed 000's central bug is a stack that claims to be async but serialises its waits (a
blocking driver under gevent): N concurrent requests, each waiting `delay`, then take at
least N x delay. An overlapping stack takes far less, but never less than the waits it is
allowed to run at once permit: with pgbouncer capping the server sessions at 3, the 100
queries run 3 at a time, so ceil(100 / 3) x delay is the best a perfect stack can do, and
per-query costs (connecting, asyncpg's prepare round trips through the cap) add to it. Here
tornado:tornado took 0.81 s against 1.00 s one after another under a cap of 3: correct, but
indistinguishable from the bug by elapsed time. So the verdict compares against the floor
the caps leave, and gives none where that floor is too close to the serial time to tell.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pywebbench.measure.verify import fetch

SERIAL_FRACTION = 0.75
"""Flag when the burst took more than this share of the one-after-another time: overlapping
stacks took 0.05-0.5 of it here (up to 0.51 on a busy machine) when nothing capped them."""
MAX_FLOOR_FRACTION = 0.25
"""Judge only when a perfect stack, under the caps, could finish within this share of the
serial time: then the 0.75 threshold is 3x the floor, room for per-query costs (the capped
tornado burst took 2.4x its floor). With fewer than 4 waits at once, no verdict."""


def allowed_in_flight(requests: int, max_db_sessions: int | None = None, db_pool: int | None = None,
                      workers: int = 1) -> int:
    """How many of the burst's waits may run at once: the session cap, an app-side pool per
    worker process (0 or None: a connection per request, no pool), and the burst itself."""
    limit = requests
    if max_db_sessions is not None and max_db_sessions > 0:
        limit = min(limit, max_db_sessions)
    if db_pool:
        limit = min(limit, db_pool * max(1, workers))
    return max(1, limit)


def overlap_verdict(requests: int, delay_s: float, elapsed_s: float, path: str, in_flight: int | None = None) -> str | None:
    """A no-overlap finding for a burst of `requests` waits of `delay_s` that took `elapsed_s`,
    or None (overlapped, or the caps leave too little room to tell)."""
    sequential = requests * delay_s
    in_flight = requests if in_flight is None else max(1, min(in_flight, requests))
    floor = math.ceil(requests / in_flight) * delay_s
    if floor > MAX_FLOOR_FRACTION * sequential:
        return None  # a correct stack under these caps may take as long as a serial one: no evidence
    if elapsed_s > SERIAL_FRACTION * sequential:
        capped = f" ({in_flight} at a time allowed, at best {floor:.2f}s)" if in_flight < requests else ""
        return (f"no-overlap: {requests} concurrent {path} took {elapsed_s:.2f}s; one after another would take "
                f"{sequential:.2f}s{capped}, so requests did not overlap (a blocking driver or client?)")
    return None


HOST = "127.0.0.1"
OVERLAP_REQUESTS = 10


def overlap_problem(port: int, path: str, delay_s: float, requests: int | None = None,
                    in_flight: Callable[[int], int] | None = None, host: str = HOST, tls: bool = False) -> str | None:
    """N concurrent requests that each wait `delay_s` must finish in well under N x delay_s.

    Seed 000's central bug: a greenlet server with an unpatched driver serialises every
    query while claiming to be async. Run only on stacks that claim to overlap. N is chosen
    so that one-after-another would take about a second: with short delays, a handful of
    requests would be dominated by fixed per-request costs and prove nothing. in_flight maps
    N to how many waits the session cap and pools let run at once (measure/overlap.py).
    """
    if requests is None:
        requests = min(100, max(OVERLAP_REQUESTS, math.ceil(1.0 / delay_s)))
    def one(_: int) -> int:
        return fetch(host, port, path, timeout_s=requests * delay_s + 30, tls=tls).status

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=requests) as pool:
        statuses = list(pool.map(one, range(requests)))
    elapsed = time.monotonic() - started
    if any(s != 200 for s in statuses):
        return f"no-overlap: {requests} concurrent {path} answered {sorted(set(statuses))}"
    return overlap_verdict(requests, delay_s, elapsed, path, in_flight(requests) if in_flight else None)
