"""The presets of seed 000 (see the seed text under ../shared/seeds)."""

from __future__ import annotations

from pywebbench.plan.presets.model import Claim, Figure, OptionValue, Preset, options_of


# --- seed 000: "Ignore All Web Performance Benchmarks, Including This One" -----------------

# The first table, in its order: stack, Wrk (workers), Tput (ratio to Flask+Gunicorn), P50, P99, #DB.
# Meinheld ran as Gunicorn's meinheld worker and aiohttp under Gunicorn's uvloop worker (the
# seed's serve scripts); Hypercorn with uvloop ("All the asyncio tests use uvloop").
_SEED000_TABLE: tuple[tuple[str, int, float, int, int, int], ...] = (
    ("bottle:gunicorn-meinheld", 6, 1.38, 85, 1136, 100),
    ("falcon:gunicorn-meinheld", 6, 1.38, 84, 1134, 99),
    ("sanic:sanic", 6, 1.24, 95, 1155, 83),
    ("flask:gunicorn-meinheld", 6, 1.23, 88, 1124, 97),
    ("starlette:uvicorn", 6, 1.23, 102, 1146, 82),
    ("bottle:gunicorn-gevent", 6, 1.21, 89, 1162, 95),
    ("aiohttp:gunicorn-aiohttp", 6, 1.20, 95, 1153, 80),
    ("flask:gunicorn-gevent", 6, 1.16, 103, 1165, 97),
    ("sanic:uvicorn", 6, 1.14, 95, 1179, 83),
    ("tornado:tornado", 6, 1.12, 91, 1170, 82),
    ("falcon:gunicorn-gevent", 6, 1.12, 82, 1144, 96),
    ("fastapi:uvicorn", 6, 1.08, 88, 1197, 77),
    ("aioflask:uvicorn", 6, 1.08, 116, 1167, 83),
    ("falcon:uwsgi", 19, 1.07, 152, 183, 19),
    ("quart:uvicorn", 6, 1.05, 116, 1167, 74),
    ("bottle:uwsgi", 19, 1.05, 154, 193, 19),
    ("bottle:gunicorn-sync", 19, 1.02, 159, 187, 19),
    ("flask:gunicorn-sync", 19, 1.00, 163, 192, 19),
    ("flask:uwsgi", 19, 0.94, 157, 1166, 19),
    ("falcon:gunicorn-sync", 19, 0.91, 159, 1183, 19),
    ("quart:hypercorn-uvloop", 6, 0.90, 150, 1216, 64),
)

# The last table: stack, My Results, Better Async, Better Sync (throughput ratios).
_SEED000_COLUMNS: tuple[tuple[str, float, float, float], ...] = (
    ("bottle:gunicorn-meinheld", 1.38, 5.56, 1.13),
    ("falcon:gunicorn-meinheld", 1.38, 5.17, 1.12),
    ("sanic:sanic", 1.24, 4.58, 1.09),
    ("flask:gunicorn-meinheld", 1.23, 5.27, 1.06),
    ("starlette:uvicorn", 1.23, 4.36, 1.13),
    ("bottle:gunicorn-gevent", 1.21, 4.59, 1.18),
    ("aiohttp:gunicorn-aiohttp", 1.20, 4.79, 1.27),
    ("flask:gunicorn-gevent", 1.16, 4.54, 1.01),
    ("sanic:uvicorn", 1.14, 4.40, 1.03),
    ("tornado:tornado", 1.12, 4.19, 1.03),
    ("falcon:gunicorn-gevent", 1.12, 4.66, 0.99),
    ("fastapi:uvicorn", 1.08, 4.33, 1.02),
    ("aioflask:uvicorn", 1.08, 3.57, 1.07),
    ("falcon:uwsgi", 1.07, 1.00, 1.43),
    ("quart:uvicorn", 1.05, 3.99, 0.99),
    ("bottle:uwsgi", 1.05, 0.90, 1.35),
    ("bottle:gunicorn-sync", 1.02, 0.97, 1.11),
    ("flask:gunicorn-sync", 1.00, 1.00, 1.00),
    ("flask:uwsgi", 0.94, 0.90, 1.26),
    ("falcon:gunicorn-sync", 0.91, 1.00, 1.11),
    ("quart:hypercorn-uvloop", 0.90, 3.24, 0.80),
)

_SEED000_STACKS = (*(row[0] for row in _SEED000_TABLE), "go:net-http")

# The seed's types (its table's Type column): Hypercorn is the one async stack its text sets apart.
_SEED000_SYNC = tuple(row[0] for row in _SEED000_TABLE if row[1] == 19)
_SEED000_ASYNC = tuple(row[0] for row in _SEED000_TABLE if row[1] == 6)
_SEED000_ASYNC_BUT_HYPERCORN = tuple(s for s in _SEED000_ASYNC if s != "quart:hypercorn-uvloop")
_SEED000_UWSGI = tuple(s for s in _SEED000_SYNC if s.endswith(":uwsgi"))
_SEED000_GUNICORN_SYNC = tuple(s for s in _SEED000_SYNC if s.endswith(":gunicorn-sync"))

_SEED000_COMMON = (
    "The 21 stacks of seed 000's table on the db workload (pg_sleep, then one random row of a million, "
    "a new connection per request, as the seed removed the app-side pool) through nginx and pgbouncer, "
    "loaded like the seed's run-docker.sh: ApacheBench without keep-alive (ab -cN -n30000). "
    "Scaled to this 2-core machine: the seed gave the app 6 CPUs, 19 workers to sync stacks and 6 (one "
    "per CPU) to greenlet and coroutine stacks; here the stack gets 1 CPU (the other runs ab, nginx, "
    "pgbouncer and PostgreSQL) and the same per-CPU ratio by the harness's worker rule: sync 3, async 1. "
    "ab's request count is scaled with the CPUs, 30000 to 5000, so a trial lasts about as long as the "
    "seed's; ab's socket timeout is its default 30 s, as the seed left it. Meinheld is Gunicorn's "
    "meinheld worker and aiohttp runs under Gunicorn's uvloop worker, as the seed's serve scripts did; "
    "Hypercorn runs uvloop, as the seed says every asyncio test did. The Go reference is added as this "
    "machine's ceiling (the seed had none). No stack of the seed is missing. "
)

_AB_SEED000: dict[str, OptionValue] = {
    "stacks": _SEED000_STACKS,
    "workloads": ("db",),
    "topology": "nginx",
    "generator": "ab",
    "requests": 5000,
    "keepalive": False,
    "timeout": 30.0,
    # ab stops at its request count; duration only bounds it (ab is given 10 x duration) and
    # sizes the plan's time estimate: 5000 requests at this machine's db rates take 5-70 s.
    "duration": 10.0,
    "repeats": 1,
    "db_pool": 0,
}


def _seed000_preset(name: str, column: str, connections: int, sessions: int, delay_s: float,
                     scaled: str, published: tuple[Figure, ...], published_from: str,
                     claims: tuple[Claim, ...], rounds_per_launch: int = 2) -> Preset:
    return Preset(
        name=name,
        title=f"Seed 000, '{column}' column: db through nginx and pgbouncer, {connections} clients, "
              f"{sessions} DB sessions, {delay_s * 1000:g} ms query delay",
        description=_SEED000_COMMON + scaled,
        seed="000_408dd1e51c29246c",
        options=options_of(**_AB_SEED000, connections=connections, max_db_sessions=sessions, db_delay=delay_s,
                           rounds_per_launch=rounds_per_launch),
        published=published,
        published_from=published_from,
        claims=claims,
    )


def _seed000_ratios(column: str) -> tuple[Figure, ...]:
    index = ("My Results", "Better Async", "Better Sync").index(column)
    return tuple(Figure(stack, "ratio", ratios[index], "db") for stack, *ratios in _SEED000_COLUMNS)


SEED000 = _seed000_preset(
    "seed000", "My Benchmark", 100, 100, 0.02,
    "Column 'My Benchmark' of the seed's configuration table: 100 clients, 100 DB sessions in total, "
    "20 ms query delay, none of them scaled (they are the column's knobs). Reproduces the seed's first "
    "table (Wrk, Tput, P50, P99, #DB), whose Tput is the 'My Results' column of its last table.",
    tuple(
        figure
        for stack, workers, ratio, p50, p99, sessions in _SEED000_TABLE
        for figure in (
            Figure(stack, "workers", workers, "db"),
            Figure(stack, "ratio", ratio, "db"),
            Figure(stack, "p50_ms", p50, "db"),
            Figure(stack, "p99_ms", p99, "db"),
            Figure(stack, "db_sessions", sessions, "db"),
        )
    ),
    "seed 000, first table (Wrk, Tput, P50, P99, #DB)",
    (
        Claim(_SEED000_ASYNC_BUT_HYPERCORN, _SEED000_SYNC, "db",
              "The async solutions (with the exception of the Hypercorn server which appears to be extremely "
              "slow) clearly perform better than the sync ones on this test."),
        Claim(("flask:gunicorn-sync",), ("quart:hypercorn-uvloop",), "db",
              "the Hypercorn server which appears to be extremely slow"),
        Claim(("aioflask:uvicorn",), ("quart:uvicorn",), "db",
              "I'm thrilled to find that my Aioflask experiment performs better than standard Flask, and that "
              "it even passed Quart by a hair."),
    ),
)

BETTER_ROUNDS_PER_LAUNCH = 1
"""The 'Better' columns' windows run to 5,000 requests, about 22 s each, a round of 22 stacks about
10 min: at two rounds a launch 40 minutes bought Better Async 4 rounds in 2 launches; at one, Better
Sync got 4 rounds in 4 launches (both 2026-11-27)."""

SEED000_BETTER_ASYNC = _seed000_preset(
    "seed000-better-async", "Better Async", 400, 100, 0.04,
    "Column 'Better Async': 400 clients, 100 DB sessions, 40 ms query delay, not scaled. Reproduces the "
    "'Better Async' column of the seed's last table.",
    _seed000_ratios("Better Async"),
    "seed 000, last table, 'Better Async' column (throughput ratios)",
    (Claim(_SEED000_ASYNC, _SEED000_SYNC, "db",
           "The \"Better Async\" benchmark shows that all sync tests are near the 1.0 baseline of the "
           "Flask/Gunicorn test, while the async tests are 3x to 6x times faster."),),
    rounds_per_launch=BETTER_ROUNDS_PER_LAUNCH,
)

SEED000_BETTER_SYNC = _seed000_preset(
    "seed000-better-sync", "Better Sync", 3, 3, 0.01,
    "Column 'Better Sync': 10 ms query delay; the seed set clients and DB sessions both to its sync "
    "worker count, 19, so no sync worker ever queues and no async worker gets more DB concurrency than "
    "a sync one. Both are scaled with the workers, 19 of 19 to 3 of 3: 3 clients, 3 sessions. "
    "Reproduces the 'Better Sync' column of the seed's last table.",
    _seed000_ratios("Better Sync"),
    "seed 000, last table, 'Better Sync' column (throughput ratios)",
    (Claim(_SEED000_UWSGI, _SEED000_GUNICORN_SYNC, "db",
           "The \"Better Sync\" benchmark shows the uWSGI tests doing better than the rest"),),
    rounds_per_launch=BETTER_ROUNDS_PER_LAUNCH,
)

SEED000_ORIGINAL = Preset(
    name="seed000-original",
    title="Seed 000, 'Original' column: db through nginx and pgbouncer, no query delay, a pool of 4 per worker",
    description=_SEED000_COMMON + (
        "Column 'Original' (Cal Paterson's benchmark as seed 000 describes it): no query delay, an "
        "app-side pool of 4 connections per worker (db_pool 4; pgbouncer's 100-session cap then never "
        "binds), 100 clients; its workers were 'Variable', so the harness's rule applies. The original "
        "also left psycopg2 unpatched under gevent, a bug rather than a knob: add --driver psycopg2 to "
        "see it (the Go reference is then left out, as --driver applies to Python stacks only). "
        "Seed 000 publishes no figures for this column."
    ),
    seed="000_408dd1e51c29246c",
    options=options_of(**{**_AB_SEED000, "db_pool": 4}, connections=100, max_db_sessions=100, db_delay=0.0),
    published=(),
    published_from="none: seed 000 publishes no figures for the 'Original' column (they are in Cal "
                   "Paterson's article, which the seed only describes)",
)
