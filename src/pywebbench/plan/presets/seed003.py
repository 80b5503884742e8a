"""The presets of seed 003 (see the seed text under ../shared/seeds)."""

from __future__ import annotations

from pywebbench.plan.presets.model import Claim, Figure, Preset, options_of


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
    options=options_of(
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
    claims=(
        Claim(tuple(f"{fw}:gunicorn-meinheld" for fw in _SEED003_FRAMEWORKS),
              tuple(f"{fw}:{server}" for fw in _SEED003_FRAMEWORKS
                    for server in ("gunicorn-eventlet", "gunicorn-gevent", "gunicorn-sync")), "hello",
              "Meinheld definitely stood out as the fastest WSGI server"),
        Claim(tuple(f"{fw}:gunicorn-meinheld" for fw in _SEED003_FRAMEWORKS if fw != "flask"),
              ("flask:gunicorn-meinheld",), "hello",
              "There are various benchmarks showing that Flask isn't performant and sadly that was the case "
              "here too."),
    ),
)
