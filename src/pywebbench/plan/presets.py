"""Presets: each experiment of the seed documents, as options this harness can run.

A preset is the seed's setup written down once: its stacks, workloads, load generator and
knobs, the sweep it ran (if any), how it made one figure from its repeats, and the figures
it published, so a report can show "measured here" next to "published". Where the seed used
a bigger machine, the preset scales it to this one and its description says how.

A preset's `options` sit between the config file and the environment / flags: any flag
still overrides them. A few things a seed did cannot be said with run-wide options yet
(`grid`, `workers_per_cpu`, `workload_requests`, `variants`); the planner applies them, as
each field's docstring says.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from pywebbench.catalog.model import DRIVER_REQUIREMENTS
from pywebbench.catalog.registry import Catalog
from pywebbench.errors import UserError
from pywebbench.plan.options import RunOptions, from_sources
from pywebbench.plan.sessions import serves
from pywebbench.plan.sweep import KnobAxis, format_value, knob_named, parse_values
from pywebbench.catalog.workloads import get_workload

OptionValue = str | int | float | bool | tuple[str, ...]
KnobValue = int | float
Grid = tuple[tuple[str, tuple[KnobValue, ...]], ...]

METRICS: Mapping[str, str] = MappingProxyType({
    "rps": "requests per second (analyze.Row.rps)",
    "ratio": "req/s relative to flask:gunicorn-sync in the same run (Row.ratio)",
    "min_ms": "fastest request, ms",
    "mean_ms": "mean latency, ms (Row.mean_ms)",
    "p50_ms": "median latency, ms (Row.p50_ms)",
    "p80_ms": "80th percentile, ms (Row.spectrum)",
    "p90_ms": "90th percentile, ms (Row.p90_ms)",
    "p95_ms": "95th percentile, ms (Row.p95_ms)",
    "p99_ms": "99th percentile, ms (Row.p99_ms)",
    "p999_ms": "99.9th percentile, ms (Row.p999_ms)",
    "max_ms": "slowest request, ms (Row.max_ms)",
    "db_sessions": "peak database server sessions (Row.db_sessions; seed 000's #DB)",
    "workers": "worker processes",
    "requests": "requests completed in one run",
    "duration_s": "measured seconds of one run",
    "requests_per_10s_min": "fewest requests in one 10 s run across the repeats (Row.rps_min x 10)",
    "requests_per_10s_max": "most requests in one 10 s run across the repeats (Row.rps_max x 10)",
})
"""Metric names a published figure may use, and where the measured counterpart lives."""


class Figure(NamedTuple):
    """One published number: (stack, metric, value) plus what it was measured under.

    `stack` is the report label: a catalog id, or `id#alias` for a preset variant.
    `where` names the grid point or variant, e.g. (("threads", 10),) or (("stack_cpus", 1),).
    """

    stack: str
    metric: str
    value: float
    workload: str
    where: tuple[tuple[str, KnobValue], ...] = ()
    note: str = ""
    """The seed's own words where its number is approximate ('1.2k', 'around 2 seconds')."""


@dataclass(frozen=True)
class Variant:
    """A stack run a second time with another DB driver / HTTP client, in the same run.

    The planner adds one session of `replace(stack, driver_override=driver)` serving only
    `workloads`, whose trials carry `alias`, so reports label it `stack#alias`.
    """

    stack: str
    driver: str
    workloads: tuple[str, ...]
    alias: str

    @property
    def label(self) -> str:
        return f"{self.stack}#{self.alias}"


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    """How the seed's setup was scaled to this machine, what has no counterpart, what it reproduces."""
    seed: str
    """The seed document, e.g. '000_408dd1e51c29246c'."""
    options: Mapping[str, OptionValue]
    """RunOptions fields (or their flag names) -> values; flags and environment override them."""
    published: tuple[Figure, ...]
    published_from: str
    """The seed table / column / sentence the figures are copied from (or why there are none)."""
    grid: Grid = ()
    """(knob, values) axes swept as a cartesian product; knob names as in pywebbench.plan.sweep.

    A knob that a stack ignores does not multiply its trials: `threads` sweeps only stacks
    whose server is threaded; the others run once per point of the remaining axes.
    """
    aggregation: str = "median"
    """How repeats become one figure: median, best (seed 003) or mean (seed 004)."""
    workers_per_cpu: int | None = None
    """At each grid point, workers = this x the stack's CPU count (seed 004: CPUs x 3).

    Applies to multi-process Python servers only: single-process ones (Waitress, Flask's dev
    server) keep one process and the references (Go, nginx) their own; --workers overrides it.
    """
    workload_requests: tuple[tuple[str, int], ...] = ()
    """Request counts for fixed-count generators (ab) where the seed used one per workload;
    the run-wide `requests` option covers every other workload."""
    variants: tuple[Variant, ...] = ()

    @property
    def stacks(self) -> tuple[str, ...]:
        value = self.options["stacks"]
        return value if isinstance(value, tuple) else (str(value),)

    @property
    def workloads(self) -> tuple[str, ...]:
        value = self.options.get("workloads", ("hello",))
        return value if isinstance(value, tuple) else (str(value),)


def _options(**values: OptionValue) -> Mapping[str, OptionValue]:
    return MappingProxyType(dict(values))


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
                     scaled: str, published: tuple[Figure, ...], published_from: str) -> Preset:
    return Preset(
        name=name,
        title=f"Seed 000, '{column}' column: db through nginx and pgbouncer, {connections} clients, "
              f"{sessions} DB sessions, {delay_s * 1000:g} ms query delay",
        description=_SEED000_COMMON + scaled,
        seed="000_408dd1e51c29246c",
        options=_options(**_AB_SEED000, connections=connections, max_db_sessions=sessions, db_delay=delay_s),
        published=published,
        published_from=published_from,
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
)

SEED000_BETTER_ASYNC = _seed000_preset(
    "seed000-better-async", "Better Async", 400, 100, 0.04,
    "Column 'Better Async': 400 clients, 100 DB sessions, 40 ms query delay, not scaled. Reproduces the "
    "'Better Async' column of the seed's last table.",
    _seed000_ratios("Better Async"),
    "seed 000, last table, 'Better Async' column (throughput ratios)",
)

SEED000_BETTER_SYNC = _seed000_preset(
    "seed000-better-sync", "Better Sync", 3, 3, 0.01,
    "Column 'Better Sync': 10 ms query delay; the seed set clients and DB sessions both to its sync "
    "worker count, 19, so no sync worker ever queues and no async worker gets more DB concurrency than "
    "a sync one. Both are scaled with the workers, 19 of 19 to 3 of 3: 3 clients, 3 sessions. "
    "Reproduces the 'Better Sync' column of the seed's last table.",
    _seed000_ratios("Better Sync"),
    "seed 000, last table, 'Better Sync' column (throughput ratios)",
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
    options=_options(**{**_AB_SEED000, "db_pool": 4}, connections=100, max_db_sessions=100, db_delay=0.0),
    published=(),
    published_from="none: seed 000 publishes no figures for the 'Original' column (they are in Cal "
                   "Paterson's article, which the seed only describes)",
)

# --- seed 001: apibench-py (Flask vs Starlette vs Go) ----------------------------------------

# Summary tables: Req/s, p50, p80, p90 per workload.
_SEED001_TABLES: tuple[tuple[str, str, int, int, int, int], ...] = (
    ("flask:gunicorn-gthread", "hello", 960, 50, 52, 56),
    ("starlette:gunicorn-uvicorn", "hello", 5789, 8, 10, 11),
    ("go:net-http", "hello", 7797, 6, 7, 8),
    ("flask:gunicorn-gthread", "upstream", 268, 152, 206, 227),
    ("starlette:gunicorn-uvicorn", "upstream", 302, 42, 108, 403),
    ("go:net-http", "upstream", 924, 36, 49, 60),
    ("flask:gunicorn-gthread", "posts", 690, 71, 74, 75),
    ("starlette:gunicorn-uvicorn", "posts", 712, 69, 75, 79),
    ("starlette:gunicorn-uvicorn#sync-client", "posts", 1388, 35, 38, 42),
    ("go:net-http", "posts", 4120, 11, 13, 15),
)

_SEED001_SYNC_CLIENT = Variant("starlette:gunicorn-uvicorn", "psycopg", ("posts",), "sync-client")


def _seed001_figures(rows: tuple[tuple[str, str, int, int, int, int], ...]) -> tuple[Figure, ...]:
    return tuple(
        Figure(stack, metric, value, workload)
        for stack, workload, rps, p50, p80, p90 in rows
        for metric, value in (("rps", rps), ("p50_ms", p50), ("p80_ms", p80), ("p90_ms", p90))
    )


_SEED001_OPTIONS: dict[str, OptionValue] = {
    "generator": "ab",
    "connections": 50,
    "requests": 1000,
    "keepalive": False,
    "workers": 1,
    "threads": 40,
    "upstream_delay": 0.03,
    "upstream_size": 4104,
    "db_pool": 40,
    "repeats": 1,
    "duration": 5.0,
}

_SEED001_SETUP = (
    "Each stack is loaded by `ab -c 50 -n 1000` without keep-alive, as the seed did; one worker and 40 "
    "threads, 50 clients and 1000 requests fit two cores as they are, so nothing is scaled: the stack "
    "gets one CPU, ab the other. Stand-ins: the seed's /users called jsonplaceholder.typicode.com over "
    "the internet; here the harness's upstream answers 4104 bytes (the seed's Flask /users document "
    "length) after 30 ms (the Go reference's /users p50, 36 ms, less its /hi p50, 6 ms). /posts reads "
    "300 rows (about 12 KB, the seed's was 12.6 KB). "
)
_SEED001_SQLITE = (
    "As in the seed, /posts reads a local SQLite file (the harness fills it with the same 300 rows as "
    "PostgreSQL's): Flask through sqlite3 connections kept open for the process's life, Starlette "
    "through `databases` over aiosqlite, the seed's async client. The Go reference has no SQLite "
    "client here and reads the same rows from PostgreSQL (its trials record db postgresql). "
)
_SEED001_POSTGRESQL = (
    "Unlike the seed, /posts reads PostgreSQL through pgbouncer with an app-side pool of 40 connections "
    "per worker (Flask's thread count), so connection setup stays out of the figure as it did with "
    "SQLite: the question the seed's author left open ('a quirk of SQLite'?). "
)
_SEED001_SYNC_NOTE = (
    "'Starlette (sync)', the seed's synchronous DB client, is a plain `def` endpoint that Starlette "
    "runs in its thread pool, as the seed routed it (driver psycopg: sqlite3 on SQLite, psycopg on "
    "PostgreSQL). "
)


def _seed001(name: str, db: str, text: str) -> Preset:
    return Preset(
        name=name,
        title=f"Seed 001 on {db}: Flask (40 threads) vs Starlette vs Go on hello, an external API and a DB read, "
              "ab -c 50 -n 1000",
        description=(
            "Seed 001's three summary tables (hello; hitting an external API; reading a database): Flask on "
            "Gunicorn with one worker and 40 threads (gthread), Starlette on Gunicorn's Uvicorn worker (one "
            "worker, as the seed's Makefile ran it) and the Go reference. " + _SEED001_SETUP + text +
            _SEED001_SYNC_NOTE + "It runs as the variant starlette:gunicorn-uvicorn#sync-client on posts in "
            "the same run. No stack of the seed is missing."
        ),
        seed="001_03421baff3cdb6fd",
        options=_options(
            stacks=("flask:gunicorn-gthread", "starlette:gunicorn-uvicorn", "go:net-http"),
            workloads=("hello", "upstream", "posts"), db=db,
            **_SEED001_OPTIONS,
        ),
        published=_seed001_figures(_SEED001_TABLES),
        published_from="seed 001, the three 'Result summary' tables (Req/s, p50, p80, p90)",
        variants=(_SEED001_SYNC_CLIENT,),
    )


def _seed001_sync_client(name: str, db: str, text: str) -> Preset:
    return Preset(
        name=name,
        title=f"Seed 001 on {db}: Starlette with a synchronous DB client on the DB read, ab -c 50 -n 1000",
        description=(
            "The 'Starlette (sync)' row of seed 001's database table, runnable on its own: "
            "starlette:gunicorn-uvicorn with driver psycopg (a blocking DB client) on posts. " + _SEED001_SETUP +
            text + _SEED001_SYNC_NOTE
        ),
        seed="001_03421baff3cdb6fd",
        options=_options(
            stacks=("starlette:gunicorn-uvicorn",), workloads=("posts",), driver="psycopg", db=db,
            **_SEED001_OPTIONS,
        ),
        published=tuple(
            figure._replace(stack=_SEED001_SYNC_CLIENT.stack)
            for figure in _seed001_figures(_SEED001_TABLES)
            if figure.stack == _SEED001_SYNC_CLIENT.label
        ),
        published_from="seed 001, database summary table, 'Starlette (sync)' row",
    )


# The seed's database was SQLite: the plain names use it; -postgresql asks the author's open question.
SEED001 = _seed001("seed001", "sqlite", _SEED001_SQLITE)
SEED001_SYNC_CLIENT = _seed001_sync_client("seed001-sync-client", "sqlite", _SEED001_SQLITE)
SEED001_POSTGRESQL = _seed001("seed001-postgresql", "postgresql", _SEED001_POSTGRESQL)
SEED001_SYNC_CLIENT_POSTGRESQL = _seed001_sync_client("seed001-sync-client-postgresql", "postgresql",
                                                      _SEED001_POSTGRESQL)

# --- seed 002: Flask threads vs gevent vs meinheld vs aiohttp on a remote call ---------------

# variant, min, p50, p99, p99.9, max, mean (ms), duration (s), requests.
_SEED002_TABLE: tuple[tuple[str, int | None, float, float, float, float, float, float, float, int], ...] = (
    ("aiohttp:gunicorn-aiohttp", None, 163.27, 247.72, 352.75, 404.59, 1414.08, 257.59, 20.10, 30702),
    ("flask:gunicorn-gevent", None, 85.02, 945.17, 6587.19, 8177.32, 8192.75, 1207.66, 20.08, 7491),
    ("flask:gunicorn-meinheld", None, 124.99, 2526.55, 6753.13, 6857.55, 6857.55, 3036.93, 20.10, 190),
    ("flask:gunicorn-gthread", 10, 163.05, 4419.11, 4505.59, 4659.46, 4667.55, 3880.05, 20.05, 1797),
    ("flask:gunicorn-gthread", 20, 110.23, 2368.20, 3140.01, 3434.39, 3476.06, 2163.02, 20.09, 3364),
    ("flask:gunicorn-gthread", 50, 122.17, 472.98, 3978.68, 8599.01, 9845.94, 541.13, 20.10, 4606),
    ("flask:gunicorn-gthread", 100, 118.26, 499.16, 4428.77, 8714.60, 9987.37, 556.77, 20.10, 4555),
    ("flask:gunicorn-gthread", 200, 112.06, 459.85, 4493.61, 8548.99, 9683.27, 527.02, 20.10, 4378),
    ("flask:gunicorn-gthread", 400, 121.63, 526.72, 3195.23, 8069.06, 9686.35, 580.54, 20.06, 4336),
    ("flask:gunicorn-gthread", 800, 127.94, 430.07, 4503.95, 8653.69, 9722.19, 514.47, 20.09, 4381),
    ("flask:gunicorn-gthread", 1000, 184.76, 732.21, 1919.72, 5323.73, 7364.60, 786.26, 20.04, 4121),
)
_SEED002_METRICS = ("min_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "duration_s", "requests")

SEED002 = Preset(
    name="seed002",
    title="Seed 002: aiohttp vs Flask on gevent, meinheld and 10..1000 threads, calling a remote server, wrk -c 400 -d 20s",
    description=(
        "Seed 002's table: aiohttp, Flask on gevent and Flask on meinheld (each under Gunicorn with two "
        "workers) and Flask on Gunicorn's threaded worker at 10, 20, 50, 100, 200, 400, 800 and 1000 "
        "threads, on the upstream workload, wrk with 400 connections for 20 s; min/p50/p99/p99.9/max/"
        "mean latency, run length and request counts. Not scaled: two workers, 400 connections and 20 s "
        "as the seed; the stack gets one CPU and wrk the other (the seed ran on one machine and did not "
        "give its CPU count). The seed's upstream was an nginx returning HTML with no stated delay; the "
        "fastest request it saw took 85 ms (flask:gevent's min), so the harness's upstream waits 80 ms, "
        "about the most that is consistent with it, and answers the harness's default 1 KB. wrk's "
        "timeout is 10 s, as the seed's slowest requests took 9.99 s. The threads axis applies to the "
        "threaded worker only: aiohttp, gevent and meinheld run once. Python 3.11 and current library "
        "versions replace the seed's Python 3.6. No stack of the seed is missing."
    ),
    seed="002_95b8e33e45f79369",
    options=_options(
        stacks=("aiohttp:gunicorn-aiohttp", "flask:gunicorn-gevent", "flask:gunicorn-meinheld",
                "flask:gunicorn-gthread"),
        workloads=("upstream",),
        generator="wrk",
        connections=400,
        duration=20.0,
        workers=2,
        upstream_delay=0.08,
        timeout=10.0,
        repeats=1,
    ),
    grid=(("threads", (10, 20, 50, 100, 200, 400, 800, 1000)),),
    published=tuple(
        Figure(stack, metric, value, "upstream", (("threads", threads),) if threads is not None else ())
        for stack, threads, *values in _SEED002_TABLE
        for metric, value in zip(_SEED002_METRICS, values, strict=True)
    ),
    published_from="seed 002, its one table (min, p50, p99, p99.9, max, mean, duration, requests)",
)

# --- seed 003: Python API framework benchmarks (2018) ----------------------------------------

_SEED003_FRAMEWORKS = ("apistar", "bottle", "falcon", "flask", "hug")
_SEED003_SERVERS = ("gunicorn-eventlet", "gunicorn-gevent", "gunicorn-sync", "gunicorn-meinheld", "uwsgi")
_SEED003_STACKS = (*(f"{fw}:{server}" for server in _SEED003_SERVERS for fw in _SEED003_FRAMEWORKS),
                   "sanic:sanic")

# 'Benchmark Results (hello world)', req/s (the seed writes 19.34k); uWSGI's row is 'errors'.
_SEED003_HELLO: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("gunicorn-eventlet", (19_340, 18_860, 19_940, 13_530, 17_360)),
    ("gunicorn-gevent", (19_280, 18_860, 19_950, 13_510, 17_550)),
    ("gunicorn-sync", (12_560, 12_910, 13_280, 11_930, 12_670)),
    ("gunicorn-meinheld", (69_700, 68_800, 70_620, 35_510, 70_960)),
)
_SEED003_SANIC_HELLO = 68_020

# The data-processing endpoint: 'min - max requests served per 10 second period', and whether
# the cell is in the seed's 'Results (Errors)' table (at least one socket error) or 'No Errors'.
_SEED003_CPU: tuple[tuple[str, int, int, bool], ...] = (
    ("apistar:gunicorn-eventlet", 209, 485, True),
    ("bottle:gunicorn-eventlet", 205, 488, True),
    ("falcon:gunicorn-eventlet", 219, 492, True),
    ("flask:gunicorn-eventlet", 272, 481, True),
    ("hug:gunicorn-eventlet", 336, 484, True),
    ("apistar:gunicorn-gevent", 332, 475, True),
    ("bottle:gunicorn-gevent", 337, 491, True),
    ("falcon:gunicorn-gevent", 278, 483, True),
    ("flask:gunicorn-gevent", 271, 472, True),
    ("flask:gunicorn-sync", 300, 454, True),
    ("hug:gunicorn-gevent", 202, 483, False),
    ("apistar:gunicorn-sync", 462, 472, False),
    ("bottle:gunicorn-sync", 348, 471, False),
    ("falcon:gunicorn-sync", 385, 468, False),
    ("hug:gunicorn-sync", 291, 461, False),
    ("apistar:gunicorn-meinheld", 465, 494, False),
    ("bottle:gunicorn-meinheld", 461, 490, False),
    ("falcon:gunicorn-meinheld", 461, 498, False),
    ("flask:gunicorn-meinheld", 450, 478, False),
    ("hug:gunicorn-meinheld", 461, 488, False),
    ("sanic:sanic", 385, 495, False),
)

SEED003 = Preset(
    name="seed003",
    title="Seed 003: API Star, Bottle, Falcon, Flask, hug on eventlet/gevent/sync/meinheld/uWSGI, and Sanic; "
          "hello and a CPU-bound endpoint, wrk -c 200, best of 5",
    description=(
        "Seed 003's two tables, 'hello world' and its data-processing endpoint, for API Star, Bottle, "
        "Falcon, Flask and hug on Gunicorn's eventlet, gevent, sync and meinheld workers and on uWSGI, "
        "plus Sanic on its own server; wrk with 200 connections, 10 s runs, 5 runs, the best req/s kept "
        "(the seed: '5 - 6 runs ... the most requests/sec from any iteration were recorded'). Scaled: the "
        "seed gave every server 17 workers on 8 vCPUs (2 x 8 + 1), greenlet workers included; here the "
        "stack gets 1 CPU (wrk the other) and every server 3 workers (2 x 1 + 1), Sanic included, which "
        "the seed ran through app.run() with its single default worker. The seed's data endpoint was "
        "closed company code costing about 170 ms of CPU per request (about 48 req/s on 8 vCPUs); its "
        "stand-in is the cpu workload's pure-Python sieve sized to about 21 ms on this machine (cpu_size "
        "170000: 8x less work for 8x fewer CPUs), so req/s and the queueing delay at 200 connections "
        "stay in the seed's range, under wrk's 10 s timeout, which the seed also raised to 10 s. uWSGI "
        "is run although the seed got socket errors from it on every framework and dropped it (it "
        "published 'errors', no number); the harness's uWSGI answers with Connection: close. No stack "
        "of the seed is missing."
    ),
    seed="003_ad8b27e0c687b5df",
    options=_options(
        stacks=_SEED003_STACKS,
        workloads=("hello", "cpu"),
        generator="wrk",
        connections=200,
        duration=10.0,
        workers=3,
        cpu_size=170_000,
        timeout=10.0,
        repeats=5,
    ),
    aggregation="best",
    published=(
        *(
            Figure(f"{fw}:{server}", "rps", rps, "hello")
            for server, values in _SEED003_HELLO
            for fw, rps in zip(_SEED003_FRAMEWORKS, values, strict=True)
        ),
        Figure("sanic:sanic", "rps", _SEED003_SANIC_HELLO, "hello"),
        *(
            figure
            for stack, low, high, errors in _SEED003_CPU
            for figure in (
                Figure(stack, "requests_per_10s_min", low, "cpu", note="with socket errors" if errors else ""),
                Figure(stack, "requests_per_10s_max", high, "cpu", note="with socket errors" if errors else ""),
            )
        ),
    ),
    published_from="seed 003, 'Benchmark Results (hello world)' (uWSGI: 'errors', no number) and "
                   "'Results (Errors)' / 'Results (No Errors)' for the data-processing endpoint",
)

# --- seed 004: selecting a Python app server for a REST API ----------------------------------

SEED004 = Preset(
    name="seed004",
    title="Seed 004: Flask app servers on a template and an API route vs nginx static, ab -c 100, "
          "mean of 10, on 1 and 2 CPUs",
    description=(
        "Seed 004's charts: Flask on Gunicorn's sync, gevent, eventlet and meinheld workers, uWSGI, "
        "Waitress and the Flask development server on the template and api workloads, and nginx serving "
        "a static file as the machine's ceiling; `ab -c 100 -n 10000` (-n 1000 for the API route) "
        "without keep-alive, straight to the app server, 10 runs averaged, req/s and p95; on 1 CPU and "
        "on 2 CPUs with workers = CPUs x 3. Scaled: the seed's app, database, web and test servers were "
        "separate VMs of 1 or 2 vCPUs each; here both configurations share this 2-core machine. With 1 "
        "CPU the stack has CPU 1 while ab, PostgreSQL and pgbouncer share CPU 0; with 2 CPUs the stack "
        "spans both and competes with them, so the 2-CPU point understates the seed's scaling. Waitress "
        "and the Flask development server are single processes (workers do not apply; threads stay at "
        "the harness default, 10); the seed did not say how it configured them. The seed's API route "
        "(its own survey code: one DB write, one DB read, a filter in Python) is the api workload. No "
        "stack of the seed is missing. Most of the seed's figures are in charts; the published figures "
        "are the few its text states."
    ),
    seed="004_ecb123d0e69ec49c",
    options=_options(
        stacks=("flask:gunicorn-sync", "flask:gunicorn-gevent", "flask:gunicorn-eventlet",
                "flask:gunicorn-meinheld", "flask:uwsgi", "flask:waitress", "flask:flask-dev", "nginx:static"),
        workloads=("static", "template", "api"),
        generator="ab",
        connections=100,
        requests=10_000,
        keepalive=False,
        topology="direct",
        repeats=10,
        # ab stops at its count; duration bounds it (10 x) and sizes the estimate.
        duration=15.0,
    ),
    grid=(("stack_cpus", (1, 2)),),
    aggregation="mean",
    workers_per_cpu=3,
    workload_requests=(("api", 1000),),
    published=(
        Figure("nginx:static", "rps", 1200, "static", (("stack_cpus", 1),), note="'1.2k requests per second'"),
        Figure("nginx:static", "rps", 2800, "static", (("stack_cpus", 2),), note="'2.8k responses per second'"),
        Figure("flask:gunicorn-meinheld", "rps", 530, "template", (("stack_cpus", 1),),
               note="'530 requests per second'"),
        Figure("flask:gunicorn-sync", "p95_ms", 2000, "api", (("stack_cpus", 1),),
               note="'Gunicorn takes around 2 seconds to respond to each request'"),
        Figure("flask:gunicorn-meinheld", "p95_ms", 810, "api", (("stack_cpus", 2),),
               note="'serving most of the responses under 810 milliseconds'"),
    ),
    published_from="seed 004's text (its charts are images): nginx static req/s on configurations #1 "
                   "and #2, Gunicorn-Meinheld's template req/s on #1, the API p95 of Gunicorn on #1 and "
                   "of Gunicorn-Meinheld on #2",
)

PRESETS: Mapping[str, Preset] = MappingProxyType({
    preset.name: preset
    for preset in (SEED000, SEED000_ORIGINAL, SEED000_BETTER_ASYNC, SEED000_BETTER_SYNC, SEED001,
                   SEED001_SYNC_CLIENT, SEED001_POSTGRESQL, SEED001_SYNC_CLIENT_POSTGRESQL, SEED002, SEED003,
                   SEED004)
})


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None


def preset_options(preset: Preset) -> dict[str, object]:
    """The preset's options, typed and keyed by flag or field name, as `from_sources` takes them.

    The aggregation is included so a report made from the results file uses the seed's.
    """
    extra: dict[str, object] = {}
    if preset.workers_per_cpu is not None:
        extra["workers_per_cpu"] = preset.workers_per_cpu
    if preset.workload_requests:
        extra["workload_requests"] = preset.workload_requests
    return {**preset.options, "aggregation": preset.aggregation, **extra}


def preset_axes(preset: Preset) -> tuple[KnobAxis, ...]:
    """The preset's grid as sweep axes, each value checked by the sweep's own rules."""
    axes: list[KnobAxis] = []
    for name, values in preset.grid:
        knob = knob_named(name)
        if not values:
            raise UserError(f"preset {preset.name}: knob {name} has no values")
        axes.append(KnobAxis(knob, parse_values(knob, ",".join(format_value(knob, v) for v in values))))
    return tuple(axes)


def check_preset(preset: Preset, catalog: Catalog) -> RunOptions:
    """Everything a run of this preset would refuse, refused now; returns its options.

    Stacks must exist and be available here, workloads and knobs must be known, options must
    pass `from_sources`, and every published figure must name a stack, workload and grid
    point (or variant) of the preset.
    """
    if "aggregation" in preset.options:
        raise UserError(f"preset {preset.name}: give the aggregation as Preset.aggregation, not an option")
    options = from_sources(config_file=None, environ={}, flags=preset_options(preset))
    for stack_id in preset.stacks + tuple(v.stack for v in preset.variants):
        stack = catalog.resolve(stack_id)
        if stack.unavailable:
            raise UserError(f"preset {preset.name}: {stack_id} is unavailable here: {stack.unavailable}")
    workloads = {get_workload(name).name for name in preset.workloads}
    for variant in preset.variants:
        if variant.driver not in DRIVER_REQUIREMENTS or not set(variant.workloads) <= workloads:
            raise UserError(f"preset {preset.name}: variant {variant.label} has an unknown driver or workload")
    for workload, count in preset.workload_requests:
        if workload not in workloads or count <= 0:
            raise UserError(f"preset {preset.name}: bad request count {count} for workload {workload!r}")
    if preset.workers_per_cpu is not None and (preset.workers_per_cpu <= 0 or "workers" in preset.options):
        raise UserError(f"preset {preset.name}: workers_per_cpu must be positive and exclude a fixed workers")
    axes = {axis.knob.value: axis.values for axis in preset_axes(preset)}
    labels = set(preset.stacks) | {v.label for v in preset.variants}
    for figure in preset.published:
        if figure.stack not in labels or figure.workload not in workloads or figure.metric not in METRICS:
            raise UserError(f"preset {preset.name}: published {figure} names no stack/workload/metric of it")
        for knob, value in figure.where:
            if value not in axes.get(knob, ()):
                raise UserError(f"preset {preset.name}: published {figure} is at no grid point of it")
    if not preset.published and not preset.published_from.startswith("none:"):
        raise UserError(f"preset {preset.name}: no published figures and no 'none:' reason")
    return options


def trial_count(preset: Preset, catalog: Catalog) -> int:
    """Trials a run of the preset plans: stacks x served workloads x grid points x repeats.

    Follows the grid rule above (threads multiply threaded servers only) and counts variants.
    """
    repeats = from_sources(config_file=None, environ={}, flags=preset_options(preset)).rounds
    workloads = [get_workload(name) for name in preset.workloads]

    def points(threaded: bool) -> int:
        count = 1
        for name, values in preset.grid:
            count *= len(values) if name != "threads" or threaded else 1
        return count

    total = 0
    for stack_id in preset.stacks:
        stack = catalog.resolve(stack_id)
        total += sum(serves(stack, w) for w in workloads) * points(stack.server.threaded)
    for variant in preset.variants:
        total += len(variant.workloads) * points(catalog.resolve(variant.stack).server.threaded)
    return total * repeats


__all__ = [
    "METRICS", "PRESETS", "Figure", "OptionValue", "Preset", "Variant", "check_preset", "get_preset", "preset_axes",
    "preset_options", "trial_count",
]
