"""Synthetic interleaved runs of a preset, written where the seed pages read them.

Each round shares one machine factor (the drift pairing cancels) and each window adds a small
noise of its own, from a seeded generator: the same file every time.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from support.builders import header, stack
from support.fake_loadgen import synthetic_result
from pywebbench.results.model import ResourceUsage, SocketErrors, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter

WINDOW_S = 4.0


@dataclass(frozen=True)
class Point:
    """One stack at one cell of the run: its true req/s, CPU ms per request, and errors."""

    label: str
    workload: str
    rps: float
    threads: int | None = None
    stack_cpus: int = 1
    cpu_ms: float = 0.5
    errors: int = 0


def trials(points: Sequence[Point], *, rounds: int = 6, rounds_per_launch: int = 2, noise: float = 0.01,
           seed: int = 1, method: str = "interleaved") -> list[TrialResult]:
    """`method` restart: a server start per window, none paired (seed 002's runs from 2026-11-29)."""
    restart = method == "restart"
    rng = random.Random(seed)
    found = []
    for round_no in range(1, rounds + 1):
        machine = rng.uniform(0.8, 1.2)  # the drift: every window of the round shares it
        for p in points:
            stack_id, _, alias = p.label.partition("#")
            rps = p.rps * machine * rng.gauss(1.0, noise)
            cpus = tuple(range(1, 1 + p.stack_cpus))
            spec = TrialSpec(f"r{round_no}-{p.label}-{p.workload}-t{p.threads}-s{p.stack_cpus}", stack_id, p.workload,
                             100, WINDOW_S, 0.5, round_no, "wrk", threads=p.threads, stack_cpus=cpus,
                             loadgen_cpus=(0,), alias=alias, method=method,
                             launch=0 if restart else (round_no - 1) // rounds_per_launch + 1,
                             settle_s=0.0 if restart else 0.25)
            load = synthetic_result(rps, WINDOW_S, socket_errors=SocketErrors(read=p.errors))
            usage = ResourceUsage("app", p.cpu_ms / 1000.0 * load.requests, 50.0, 2, WINDOW_S)
            found.append(TrialResult(spec, stack(stack_id), TrialStatus.OK, "2026-11-23T00:00:00+00:00",
                                     "2026-11-23T00:00:04+00:00", load=load, keepalive=True, resources=(usage,),
                                     cpu_source="cgroup-v2"))
    return found


def write_run(results: Path, preset: str, points: Sequence[Point], *, baseline: str = "flask:gunicorn-sync",
              **kwargs: object) -> Path:
    """docs/results/seeds/<preset>/results.jsonl under `results` (a docs/results stand-in)."""
    run_dir = results / "seeds" / preset
    run_dir.mkdir(parents=True, exist_ok=True)
    options = {"preset": preset, "baseline": baseline, "method": kwargs.get("method", "interleaved"),
               "precision": 0.02, "budget_s": 600.0}
    writer = ResultsWriter(run_dir / "results.jsonl", replace(header(), options=options))
    for trial in trials(points, **kwargs):  # type: ignore[arg-type]
        writer.add_trial(trial)
    writer.finish("complete")
    writer.close()
    return run_dir
