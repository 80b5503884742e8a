"""Synthetic connection-shape runs (issue 50) with known figures: windows of idle, stream and sse
with the Go driver's counts and memory, and hello over several protocols, in launches, as
scripts/connections-page keeps them (results.jsonl, run.json, console.txt)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from pywebbench.results.model import (
    Latency, LoadResult, ResourceUsage, ServiceRecord, SocketErrors, StackInfo, TrialResult, TrialSpec, TrialStatus,
)
from pywebbench.results.shapes import ShapeFigures
from pywebbench.results.store import ResultsWriter
from support.builders import header

SYNC = StackInfo("flask:gunicorn-sync", "flask", "Flask", "gunicorn", "Gunicorn", "sync", "sync", "WSGI", "Sync",
                 "-", "-", 3, 1)
LOOP = StackInfo("starlette:uvicorn", "starlette", "Starlette", "uvicorn", "Uvicorn", "", "uvicorn", "ASGI",
                 "Async-Coroutine", "uvloop", "httptools", 1, 1)
GRANIAN = replace(LOOP, id="starlette:granian", server="granian", server_title="Granian", worker_class="granian")


def load(rps: float, p99_ms: float, *, duration_s: float = 2.0, bytes_read: int = 0,
         shape: ShapeFigures | None = None, timeouts: int = 0) -> LoadResult:
    latency = Latency(p99_ms / 2, 0.1, p99_ms * 2, ((50.0, p99_ms / 2), (99.0, p99_ms)))
    return LoadResult("shapes" if shape else "wrk", int(rps * duration_s), duration_s, SocketErrors(timeout=timeouts),
                      0, latency, bytes_read=bytes_read, shape=shape)


def idle_figures(asked: int, held: int, rss_kb_per_connection: float, *, refused: int = 0, closed: int = 0,
                 ) -> ShapeFigures:
    opened = asked - refused
    return ShapeFigures("shapes idle", asked, held, refused, closed, 0.5, asked + 64, 20000, 10_000,
                        10_000 + round(rss_kb_per_connection * opened), None, 100, 100 + opened, 10, 10 + 2 * opened)


def window(stack: StackInfo, workload: str, launch: int, result: LoadResult, *, connections: int = 100,
           protocol: str | None = None, app_cpu_s: float = 1.0) -> TrialResult:
    spec = TrialSpec(f"L{launch}-{stack.id}-{workload}-{connections}-{protocol}", stack.id, workload, connections,
                     result.duration_s, 0.5, launch, "wrk", stack_cpus=(1,), loadgen_cpus=(0,), protocol=protocol,
                     method="interleaved", launch=launch)
    errors = result.errors
    return TrialResult(spec, stack, TrialStatus.OK, "2026-11-28T10:00:00+00:00", "2026-11-28T10:00:03+00:00",
                       load=result, keepalive=True, resources=(ResourceUsage("app", app_cpu_s, 30.0, 1, 2.0),),
                       checks=("errors: failed requests",) if errors else ())


def idle_windows() -> list[TrialResult]:
    """The event loop holds every idle connection at 2, 3, 4 KB each (per launch); the sync worker
    answers each with a close (refused, as the driver counts it)."""
    trials = []
    for n in (100, 1000):
        for launch, kb in ((1, 2.0), (2, 3.0), (3, 4.0)):
            trials.append(window(LOOP, "idle", launch, load(200.0, 1.0 + launch, shape=idle_figures(n, n, kb)),
                                 connections=n))
            trials.append(window(SYNC, "idle", launch, load(200.0, 5.0, shape=idle_figures(n, 0, 0.0, refused=n)),
                                 connections=n))
    return trials


def stream_windows() -> list[TrialResult]:
    """10 MB/s, 20 MB/s and 30 MB/s in three launches, 1 CPU second per window: 2 s windows."""
    return [window(LOOP, "stream", launch, load(10.0, 50.0, bytes_read=mb * 2 * 1_000_000), app_cpu_s=1.0)
            for launch, mb in ((1, 10), (2, 20), (3, 30))]


def protocol_windows() -> list[TrialResult]:
    return [window(GRANIAN, "hello", launch, load(1000.0 * factor + launch, 3.0), protocol=protocol)
            for protocol, factor in (("h1", 10.0), ("h2c", 8.0), ("h2-tls", 5.0)) for launch in (1, 2, 3)]


def write_part(folder: Path, trials: Sequence[TrialResult], *, command: str, skipped: Sequence[str] = (),
               services: Sequence[ServiceRecord] = ()) -> Path:
    """One part as scripts/connections-page keeps it."""
    folder.mkdir(parents=True, exist_ok=True)
    writer = ResultsWriter(folder / "results.jsonl", header())
    for service in services:
        writer.add_service(service)
    for trial in trials:
        writer.add_trial(trial)
    writer.finish("complete")
    writer.close()
    (folder / "console.txt").write_text("".join(f"{line}\n" for line in ("plan: ...", *skipped)))
    (folder / "run.json").write_text(json.dumps({"schema": 1, "part": folder.name, "exit": 0, "wall_s": 125,
                                                 "started_at": "2026-11-28T10:00:00Z", "commit": "abc1234",
                                                 "command": command}))
    return folder
