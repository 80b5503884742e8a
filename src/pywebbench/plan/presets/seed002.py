"""The presets of seed 002 (see the seed text under ../shared/seeds)."""

from __future__ import annotations

from pywebbench.plan.presets.model import Claim, Figure, Preset, options_of


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
    options=options_of(
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
    claims=(
        Claim(("aiohttp:gunicorn-aiohttp",), ("flask:gunicorn-gevent", "flask:gunicorn-meinheld",
                                              "flask:gunicorn-gthread"), "upstream",
              "But nothing handled nearly as many requests as aiohttp."),
        Claim(("flask:gunicorn-gevent",), ("flask:gunicorn-gthread",), "upstream",
              "Gevent handled requests faster than any threading implementation."),
        Claim(("flask:gunicorn-gevent",), ("flask:gunicorn-meinheld",), "upstream",
              "The interesting note is that the meinheld worker didn't scale very well at all."),
    ),
)
