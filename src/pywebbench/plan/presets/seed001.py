"""The presets of seed 001 (see the seed text under ../shared/seeds)."""

from __future__ import annotations

from pywebbench.plan.presets.model import Claim, Figure, OptionValue, Preset, Variant, options_of


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

_FLASK, _STARLETTE = "flask:gunicorn-gthread", "starlette:gunicorn-uvicorn"
_SEED001_CLAIMS = (
    Claim((_STARLETTE,), (_FLASK,), "hello",
          'Starlette is 5x faster than Flask at a trivial "hello world" benchmark.'),
    Claim((_STARLETTE,), (_FLASK,), "posts",
          "When connecting directly to a database, Starlette and Flask perform comparably.", level=True),
    Claim((f"{_STARLETTE}#sync-client",), (_STARLETTE,), "posts",
          "switching to a synchronous DB client, instead of the async client recommended by the Starlette "
          "docs, improved Starlette performance by nearly 2x. This may just be a quirk of SQLite."),
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
        options=options_of(
            stacks=("flask:gunicorn-gthread", "starlette:gunicorn-uvicorn", "go:net-http"),
            workloads=("hello", "upstream", "posts"), db=db,
            **_SEED001_OPTIONS,
        ),
        published=_seed001_figures(_SEED001_TABLES),
        published_from="seed 001, the three 'Result summary' tables (Req/s, p50, p80, p90)",
        variants=(_SEED001_SYNC_CLIENT,),
        claims=_SEED001_CLAIMS,
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
        options=options_of(
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
