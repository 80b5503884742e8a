"""A connection shape's ceiling: what its own load reaches against a server that costs nothing.

As wrk's ceiling is nginx serving a static file (measure/ceiling.py), each shape's is the same
load (its driver, its connections, its keep-alive or body) against `shapes serve`, the Go
command's server that answers every shape route and does nothing else, pinned to the stack's
CPUs. Measured once per run for each shape and setting, recorded as a service record
("shape-ceiling"), and every window of the shape is checked against it:

- a closed-loop shape (close, stream, upload, ws-echo): the near-ceiling check, in its own unit;
- a paced shape (idle, sse: a fixed rate): whether the driver keeps that rate and holds every
  connection against the server that costs nothing; where it does not, every window of the
  setting carries the instrument check (the figure would be the driver's).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from pywebbench.catalog.shapes.base import Shape
from pywebbench.catalog.workloads import WORKLOADS, Workload
from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest, taskset_prefix
from pywebbench.loadgen.shapes import shapes_binary
from pywebbench.loadgen.shaping import shaped
from pywebbench.measure.ceiling import CeilingReading, ceiling_seconds
from pywebbench.measure.verify import NotReady, wait_ready
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.results.model import LoadResult, ServiceRecord, TrialSpec

HOST = "127.0.0.1"
RECORD = "shape-ceiling"
SINK = "a Go server that does nothing (shapes serve)"
"""What a shape's ceiling is measured against, as checks name it."""
RATE_KEPT = 0.95


def shape_of(workload: str) -> Shape | None:
    """The workload's connection shape; None for the built-in workloads and a person's own."""
    found = WORKLOADS.get(workload)
    return found.shape if found is not None else None


def paced_problem(load: LoadResult) -> str | None:
    """Why a paced shape's driver is the limit against the server that costs nothing, or None."""
    held = load.shape
    if load.errors:
        return f"{load.errors} errors against {SINK}"
    if held is not None and held.held < held.asked:
        return f"the driver held {held.held} of {held.asked} connections against {SINK}"
    if load.rate and load.rps < RATE_KEPT * load.rate:
        return f"the driver kept {load.rps:,.0f} of {load.rate:,.0f}/s against {SINK}"
    return None


class ShapeCeiling:
    """Callable per trial spec: a shape's ceiling, else `base` (nginx static); memoised per setting."""

    def __init__(self, base: Callable[[TrialSpec], CeilingReading], generator: LoadGenerator, work_dir: Path, *,
                 keepalive: bool = True, timeout_s: float = 5.0,
                 on_record: Callable[[ServiceRecord], None] = lambda record: None,
                 on_seconds: Callable[[float], None] = lambda seconds: None) -> None:
        self.base = base
        self.generator = generator
        self.work_dir = work_dir
        self.keepalive = keepalive
        self.timeout_s = timeout_s
        self.on_record = on_record
        self.on_seconds = on_seconds
        self._known: dict[tuple[object, ...], CeilingReading] = {}

    def __call__(self, spec: TrialSpec) -> CeilingReading:
        workload = WORKLOADS.get(spec.workload)
        if workload is None or workload.shape is None:
            return self.base(spec)
        key = (spec.workload, spec.connections, spec.loadgen_cpus, spec.stack_cpus, ceiling_seconds(spec))
        if key not in self._known:
            started = time.monotonic()
            self._known[key] = self._measure(spec, workload, workload.shape)
            self.on_seconds(time.monotonic() - started)
        return self._known[key]

    def _measure(self, spec: TrialSpec, workload: Workload, shape: Shape) -> CeilingReading:
        label = f"shape-ceiling-{workload.name}-c{spec.connections}-{len(self._known)}"
        binary = shapes_binary()
        if binary is None:
            return CeilingReading(problem="the shapes command could not be built (Go >= 1.22 is needed)")
        port = free_port(HOST)
        argv = [*taskset_prefix(spec.stack_cpus), str(binary), "serve", "-host", HOST, "-port", str(port)]
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        setting = {"workload": workload.name, "connections": spec.connections, "stack_cpus": list(spec.stack_cpus),
                   "loadgen_cpus": list(spec.loadgen_cpus), "window_s": ceiling_seconds(spec)[1], "unit": shape.unit}
        try:
            with ManagedProcess(argv, env=env, log_dir=self.work_dir / label, name="shapes-serve") as sink:
                wait_ready(HOST, port, "/hello", timeout_s=10.0, alive=lambda: sink.poll() is None)
                load = self._load(spec, workload, port, sink.pid, label)
        except (NotReady, LoadGenError, OSError) as exc:
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.on_record(ServiceRecord(RECORD, "", {**setting, "error": problem}))
            return CeilingReading(problem=problem)
        figures = load.shape
        self.on_record(ServiceRecord(RECORD, self.generator.version(), {
            **setting, "generator": load.generator, "rps": round(load.rps, 1), "errors": load.errors,
            "p99_ms": load.latency.at(99.0), "rate": load.rate,
            "held": figures.held if figures else None,
            "rss_per_connection_kb": figures.rss_per_connection_kb if figures else None,
        }))
        if shape.paced:
            return CeilingReading(problem=paced_problem(load))
        if not load.requests or load.errors:
            return CeilingReading(problem=f"{SINK} answered {load.requests} with {load.errors} errors")
        return CeilingReading(rps=load.rps)

    def _load(self, spec: TrialSpec, workload: Workload, port: int, pid: int, label: str) -> LoadResult:
        warmup_s, window_s = ceiling_seconds(spec)
        base = LoadRequest(url=f"http://{HOST}:{port}{workload.path}", connections=spec.connections,
                           duration_s=warmup_s, cpus=spec.loadgen_cpus, timeout_s=self.timeout_s,
                           keepalive=self.keepalive, label=f"{label}.warmup")
        if workload.shape is None or workload.shape.drive.command is None:
            # an HTTP generator warms as for nginx; a Go driver opens its connections before it measures, and
            # a warm-up's would stay in the server's RSS, hiding what the measured ones cost
            self.generator.run(shaped(base, workload.name), self.work_dir / label)
        window = LoadRequest(url=base.url, connections=spec.connections, duration_s=window_s, cpus=spec.loadgen_cpus,
                             timeout_s=self.timeout_s, keepalive=self.keepalive, label=label)
        return self.generator.run(shaped(window, workload.name, (pid,)), self.work_dir / label)
