"""A realistic stored run for the report tests: several rounds per stack, a connections sweep
on `db`, an open-loop rate sweep, resources, full latency spectra, failed checks, an
unavailable stack. Deterministic: the same file every time.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from pathlib import Path

from pywebbench.results.model import (
    EnvironmentRecord,
    Latency,
    LoadResult,
    MachineInfo,
    ResourceUsage,
    RunHeader,
    ServiceRecord,
    SocketErrors,
    StackInfo,
    TrialResult,
    TrialSpec,
    TrialStatus,
)
from pywebbench.results.store import ResultsWriter, results_path

DURATION_S = 5.0
WARMUP_S = 2.0
STARTED = "2026-11-21T15:40:00+00:00"
FINISHED = "2026-11-21T15:40:07+00:00"
ENV_HASH = "3f9a1c2e7b6d"

# wrk's spectrum (src/pywebbench/loadgen/wrk_report.lua).
SPECTRUM = (0.0, 1.0, 5.0, 10.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0,
            97.5, 99.0, 99.5, 99.9, 99.95, 99.99, 100.0)

STACKS: dict[str, StackInfo] = {
    s.id: s for s in (
        StackInfo("flask:gunicorn-sync", "flask", "Flask", "gunicorn", "Gunicorn", "sync", "sync", "WSGI",
                  "Sync", "-", "gunicorn", 3, 1, ENV_HASH,
                  ("gunicorn", "-w", "3", "app_flask:app"), "psycopg"),
        StackInfo("flask:gunicorn-gevent", "flask", "Flask", "gunicorn", "Gunicorn", "gevent", "gevent", "WSGI",
                  "Async-Greenlet", "gevent (libev)", "gunicorn", 1, 1, ENV_HASH,
                  ("gunicorn", "-k", "gevent", "app_flask:app"), "psycopg2+psycogreen"),
        StackInfo("starlette:uvicorn", "starlette", "Starlette", "uvicorn", "Uvicorn", "", "uvicorn", "ASGI",
                  "Async-Coroutine", "uvloop", "httptools", 1, 1, ENV_HASH,
                  ("uvicorn", "app_starlette:app"), "asyncpg"),
        StackInfo("falcon:meinheld", "falcon", "Falcon", "meinheld", "Meinheld", "", "meinheld", "WSGI",
                  "Async-Greenlet", "picoev", "picohttpparser", 1, 1, ENV_HASH,
                  ("pwb_serve", "meinheld", "app_falcon:app"), "psycopg2+meinheld"),
        StackInfo("go:net-http", "go", "Go", "go", "Go net/http", "", "", "own", "Reference", "Go runtime",
                  "net/http", 1, 1, "", ("pwb-go-reference",), "pgx"),
        StackInfo("sanic:sanic", "sanic", "Sanic", "sanic", "Sanic", "", "sanic", "own", "Async-Coroutine",
                  "uvloop", "httptools", 1, 1),
    )
}

HELLO_STACKS = ("go:net-http", "falcon:meinheld", "starlette:uvicorn", "flask:gunicorn-gevent",
                "flask:gunicorn-sync")
"""The hello cell's measured stacks, fastest first; sanic:sanic is there too, unavailable."""
HELLO_RPS = {"go:net-http": 33_700.0, "falcon:meinheld": 20_400.0, "starlette:uvicorn": 16_000.0,
             "flask:gunicorn-gevent": 3_300.0, "flask:gunicorn-sync": 2_850.0}
HELLO_ROUNDS = 3
DB_STACKS = ("flask:gunicorn-sync", "flask:gunicorn-gevent", "starlette:uvicorn")
DB_CONNECTIONS = (25, 50, 100)
OPEN_LOOP_STACKS = ("flask:gunicorn-sync", "starlette:uvicorn")
OPEN_LOOP_RATES = (1_000.0, 2_000.0, 4_000.0)
SATURATED_CHECK = "generator-saturated: wrk used 98% of 1 CPU"

# CPU ms each request costs the app, and its resident memory: what a real run measured here.
CPU_MS = {"go:net-http": 0.029, "falcon:meinheld": 0.048, "starlette:uvicorn": 0.061,
          "flask:gunicorn-gevent": 0.29, "flask:gunicorn-sync": 0.34}
RSS_MB = {"go:net-http": 11.5, "falcon:meinheld": 27.0, "starlette:uvicorn": 41.0,
          "flask:gunicorn-gevent": 58.0, "flask:gunicorn-sync": 96.0}


def header(planned_trials: int = 0) -> RunHeader:
    machine = MachineInfo("bench-vm", "Intel(R) Xeon(R) CPU @ 2.20GHz", 2, (0, 1), 7_940,
                          "6.18.0-1-amd64", "Debian GNU/Linux 12 (bookworm)", "3.11.2", (0.31, 0.42, 0.40),
                          "performance")
    options = {"stacks": sorted(STACKS), "workloads": ["hello", "db"], "connections": [25, 50, 100],
               "duration": DURATION_S, "warmup": WARMUP_S, "repeats": HELLO_ROUNDS, "aggregation": "median",
               "generator": "wrk", "stack_cpus": [1], "loadgen_cpus": [0], "db_delay": 0.02,
               "max_db_sessions": 100, "seed": 1}
    tools = {"wrk": "wrk 4.2.0 [epoll] Copyright (C) 2012 Will Glozer", "oha": "oha 1.4.5", "uv": "uv 0.5.4",
             "go": "go1.22.2 linux/amd64"}
    return RunHeader("20261121-154000", STARTED, "0.1.0",
                     ("pywebbench", "run", "--stack", "flask:*", "--repeats", "3"), options, machine, tools,
                     planned_trials=planned_trials)


def _latency(p50_ms: float, tail: float, rng: random.Random) -> Latency:
    """A spectrum shaped like a real one: flat below the median, growing with each nine."""
    def at(pct: float) -> float:
        if pct < 50.0:
            return p50_ms * (0.35 + 0.65 * pct / 50.0)
        nines = -math.log10(max(1.0 - pct / 100.0, 1e-5))
        return p50_ms * (1.0 + tail * (nines - math.log10(2.0)) ** 2)

    jitter = rng.uniform(0.95, 1.05)
    points = tuple((p, round(at(min(p, 99.995)) * jitter * (1.3 if p == 100.0 else 1.0), 3)) for p in SPECTRUM)
    return Latency(mean_ms=round(p50_ms * 1.1 * jitter, 3), stdev_ms=round(p50_ms * 0.4, 3),
                   max_ms=points[-1][1], percentiles=points)


def _resources(stack_id: str, rps: float, loadgen_percent: float) -> tuple[ResourceUsage, ...]:
    requests = rps * DURATION_S
    return (
        ResourceUsage("app", cpu_s=round(CPU_MS[stack_id] * requests / 1000.0, 3), peak_rss_mb=RSS_MB[stack_id],
                      processes=STACKS[stack_id].workers + (1 if stack_id.startswith("flask:gunicorn") else 0),
                      window_s=DURATION_S),
        ResourceUsage("loadgen", cpu_s=round(loadgen_percent / 100.0 * DURATION_S, 3), peak_rss_mb=6.2,
                      processes=1, window_s=DURATION_S),
        ResourceUsage("other", cpu_s=0.12, peak_rss_mb=0.0, processes=140, window_s=DURATION_S),
    )


def _spec(stack_id: str, workload: str, round_no: int, *, connections: int = 100, generator: str = "wrk",
          rate: float | None = None, db: bool = False) -> TrialSpec:
    knob = f"-r{rate:g}" if rate else f"-c{connections}"
    return TrialSpec(f"r{round_no}-{stack_id}-{workload}{knob}", stack_id, workload, connections, DURATION_S,
                     WARMUP_S, round_no, generator, stack_cpus=(1,), loadgen_cpus=(0,),
                     max_db_sessions=100 if db else None, db_delay_s=0.02 if db else None, rate=rate)


def _trial(spec: TrialSpec, load: LoadResult | None, *, resources: tuple[ResourceUsage, ...] = (),
           checks: tuple[str, ...] = (), db_sessions: int | None = None, status: TrialStatus = TrialStatus.OK,
           error: str | None = None) -> TrialResult:
    return TrialResult(spec, STACKS[spec.stack_id], status, STARTED, FINISHED, load=load,
                       keepalive=None if load is None else True, error=error, checks=checks,
                       db_sessions=db_sessions, resources=resources, sampler_cpu_s=0.04,
                       load_average=(0.31, 0.42, 0.40))


def _load(rps: float, latency: Latency, *, generator: str = "wrk", errors: SocketErrors = SocketErrors(),
          rate: float | None = None, uncorrected: Latency | None = None) -> LoadResult:
    requests = int(rps * DURATION_S)
    return LoadResult(generator, requests, DURATION_S, errors, 0, latency, bytes_read=requests * 150,
                      command=(generator, "-c", "100", "-d", f"{DURATION_S:g}s", "http://127.0.0.1:8000/hello"),
                      rate=rate, latency_uncorrected=uncorrected)


def hello_trials(rng: random.Random) -> list[TrialResult]:
    trials = []
    for round_no in range(1, HELLO_ROUNDS + 1):
        for stack_id in HELLO_STACKS:
            rps = HELLO_RPS[stack_id] * rng.uniform(0.93, 1.07)
            loadgen = min(98.0, rps / 340.0)
            checks = (SATURATED_CHECK,) if loadgen >= 90.0 else ()
            tail = 3.0 if STACKS[stack_id].concurrency == "Async-Coroutine" else 1.2
            load = _load(rps, _latency(100.0 / rps * 1000.0 * 0.9, tail, rng))
            trials.append(_trial(_spec(stack_id, "hello", round_no), load,
                                 resources=_resources(stack_id, rps, loadgen), checks=checks))
        trials.append(_trial(_spec("sanic:sanic", "hello", round_no), None, status=TrialStatus.UNAVAILABLE,
                             error="sanic 23.12 could not be installed: no wheel for this Python\nfull log ..."))
    return trials


def db_trials(rng: random.Random) -> list[TrialResult]:
    """Seed 000's db sweep: 20 ms queries, the sync stack capped by its 3 workers."""
    trials = []
    for round_no in (1, 2):
        for connections in DB_CONNECTIONS:
            for stack_id in DB_STACKS:
                if stack_id == "flask:gunicorn-sync":
                    rps, sessions = 3 / 0.0205, 3
                else:
                    rps, sessions = min(connections, 100) / 0.0215, min(connections, 100)
                rps *= rng.uniform(0.95, 1.05)
                overloaded = stack_id == "flask:gunicorn-sync" and connections == 100
                errors = SocketErrors(timeout=41) if overloaded else SocketErrors()
                checks: tuple[str, ...] = ()
                if overloaded:
                    checks = (f"errors: 41 of {int(rps * DURATION_S) + 41} (connect 0, read 0, write 0, timeout 41, "
                              "non-2xx 0)",)
                load = _load(rps, _latency(connections / rps * 1000.0 * 0.95, 0.6, rng), errors=errors)
                trials.append(_trial(_spec(stack_id, "db", round_no, connections=connections, db=True), load,
                                     resources=_resources(stack_id, rps, rps / 400.0), checks=checks,
                                     db_sessions=sessions))
    return trials


def open_loop_trials(rng: random.Random) -> list[TrialResult]:
    """Constant-rate hello: Flask falls behind at 4,000 req/s and its corrected latency shows the queue."""
    trials = []
    capacity = {"flask:gunicorn-sync": 2_900.0, "starlette:uvicorn": 15_500.0}
    for round_no in (1, 2):
        for rate in OPEN_LOOP_RATES:
            for stack_id in OPEN_LOOP_STACKS:
                achieved = min(rate, capacity[stack_id]) * rng.uniform(0.985, 1.0)
                behind = rate > capacity[stack_id]
                uncorrected = _latency(1.8 if not behind else 30.0, 1.5, rng)
                corrected = _latency(1.9 if not behind else 1_450.0, 1.6 if not behind else 0.2, rng)
                checks = (f"rate-not-reached: {achieved:,.0f} of {rate:,.0f} req/s offered",) if behind else ()
                load = _load(achieved, corrected, generator="oha", rate=rate, uncorrected=uncorrected)
                trials.append(_trial(_spec(stack_id, "hello", round_no, generator="oha", rate=rate), load,
                                     resources=_resources(stack_id, achieved, achieved / 300.0), checks=checks))
    return trials


def services() -> tuple[ServiceRecord, ...]:
    return (
        ServiceRecord("postgresql", "15.8", {"port": 54_321, "max_connections": 200, "rows": 1_000_000,
                                             "shared_buffers": "128MB"}),
        ServiceRecord("pgbouncer", "1.18.0", {"pool_mode": "session", "max_db_connections": 100,
                                              "server_reset_query": "DISCARD ALL"}),
    )


def environment() -> EnvironmentRecord:
    return EnvironmentRecord(ENV_HASH, "3.11.2", ("flask==3.0.3", "gunicorn==22.0.0", "gevent==24.2.1"), (),
                             ("flask==3.0.3", "gunicorn==22.0.0", "gevent==24.2.1", "werkzeug==3.0.4"), 4.2)


def all_trials(seed: int = 7) -> list[TrialResult]:
    rng = random.Random(seed)
    return hello_trials(rng) + db_trials(rng) + open_loop_trials(rng)


def write_results(run_dir: Path, extra: Iterable[TrialResult] = (), *, complete: bool = True) -> Path:
    """Store the run in `run_dir` as the runner would, and return the directory."""
    trials = all_trials() + list(extra)
    writer = ResultsWriter(results_path(run_dir), header(planned_trials=len(trials)))
    try:
        writer.add_environment(environment())
        for service in services():
            writer.add_service(service)
        for trial in trials:
            writer.add_trial(trial)
        if complete:
            writer.finish("complete")
    finally:
        writer.close()
    return run_dir


HOSTILE_STACK = "evil:<script>alert('x')</script>"
HOSTILE_FRAMEWORK = "<img src=x onerror=alert(1)> | pipe"


def hostile_trial() -> TrialResult:
    """A stack whose names are markup (and a table pipe), for the escaping tests."""
    stack = StackInfo(HOSTILE_STACK, "evil", HOSTILE_FRAMEWORK, "evil", "<b>Bold</b> & co", "", "", "WSGI",
                      "Sync", "-", "-", 1, 1)
    spec = TrialSpec("r1-evil-hello", HOSTILE_STACK, "hello", 100, DURATION_S, WARMUP_S, 1, "wrk",
                     stack_cpus=(1,), loadgen_cpus=(0,))
    load = _load(1_234.0, _latency(5.0, 1.0, random.Random(1)))
    return TrialResult(spec, stack, TrialStatus.OK, STARTED, FINISHED, load=load, keepalive=True,
                       checks=("spread: <i>not</i> markup",))
