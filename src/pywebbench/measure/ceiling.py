"""The generator's own ceiling: what it reaches against nginx serving a static file.

A Python stack close to that figure is measured by the generator, not by itself. The
ceiling is measured once per run for each generator setting that shapes it (connections,
the generator's and the stack's CPUs, keep-alive, the window's length, the protocol), with nginx
pinned to the stack's CPUs and given one worker per CPU, and recorded as a service record.

A window in a protocol other than h1 is sent by h2load (loadgen/registry.window_generator), so
its ceiling is h2load's speaking that protocol to nginx static listening in it (h2c by prior
knowledge, TLS with the run's certificate, h2 by ALPN): wrk's over h1 bounds nothing it sends.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import psutil

from pywebbench.catalog.protocols import Protocol, protocol_of
from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest
from pywebbench.loadgen.h2load import H2load
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services import ServiceError
from pywebbench.services.nginx import BINARY, NginxService
from pywebbench.catalog.workloads import get_workload
from pywebbench.stage.tls import tls_material

HOST = "127.0.0.1"
WARMUP_S = 1.0
WINDOW_S = 2.0
SHORTEST_S = 0.5
"""The ceiling's warm-up and window are the trial's own, between SHORTEST_S and the values above:
a ceiling read over a longer window than the trials it bounds is no more use to them, and a run
of short windows (a test of the plumbing, a quick look) would otherwise pay 3 s for it."""


def ceiling_seconds(spec: TrialSpec) -> tuple[float, float]:
    """The warm-up and the window a ceiling for this trial is read over."""
    return (min(WARMUP_S, max(SHORTEST_S, spec.warmup_s)), min(WINDOW_S, max(SHORTEST_S, spec.duration_s)))


def _pin(pids: tuple[int, ...], cpus: tuple[int, ...]) -> None:
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for proc in (root, *root.children(recursive=True)):
                proc.cpu_affinity(list(cpus))
        except psutil.Error:
            pass  # pinning is best effort: an unpinned nginx only makes the ceiling higher


@dataclass(frozen=True)
class CeilingReading:
    """The ceiling for a trial's setting, or why there is none (the near-ceiling check is then off)."""

    rps: float | None = None
    problem: str | None = None
    """Set when the ceiling was due but could not be measured: shown as a check on the trial."""


NO_CEILING = CeilingReading()
"""Open loop, or no ceiling asked for: nothing to approach and nothing failed."""


def no_ceiling(spec: TrialSpec) -> CeilingReading:
    """The ceiling of a run that measures none (generators on other hosts, unit tests)."""
    return NO_CEILING


class GeneratorCeiling:
    """Callable per trial spec; memoised, so the cost is paid once per setting."""

    def __init__(
        self, generator: LoadGenerator, work_dir: Path, *, keepalive: bool = True, timeout_s: float = 5.0,
        on_record: Callable[[ServiceRecord], None] = lambda record: None,
        on_seconds: Callable[[float], None] = lambda seconds: None, tls_dir: Path | None = None,
    ) -> None:
        self.generator = generator
        self.by_protocol: LoadGenerator = H2load()
        """The generator of every protocol but h1, as for the windows it bounds."""
        self.tls_dir = tls_dir if tls_dir is not None else work_dir / "tls"
        """Where the run's certificate is (stage/tls.py: made there on first use)."""
        self.work_dir = work_dir
        self.keepalive = keepalive
        self.timeout_s = timeout_s
        self.on_record = on_record
        self.on_seconds = on_seconds
        self._known: dict[tuple[object, ...], CeilingReading] = {}

    def __call__(self, spec: TrialSpec) -> CeilingReading:
        if spec.rate is not None:
            return NO_CEILING  # open loop offers a fixed rate: there is no ceiling to approach
        if not Path(BINARY).exists():
            return CeilingReading(problem=f"nginx is not installed at {BINARY}")
        key = (protocol_of(spec.protocol), spec.connections, spec.loadgen_cpus, spec.stack_cpus, spec.requests,
               ceiling_seconds(spec))
        if key not in self._known:
            started = time.monotonic()
            self._known[key] = self._measure(spec)
            self.on_seconds(time.monotonic() - started)
        return self._known[key]

    def _measure(self, spec: TrialSpec) -> CeilingReading:
        protocol = protocol_of(spec.protocol)
        suffix = "" if protocol is Protocol.H1 else f"-{protocol.value}"
        label = f"ceiling-c{spec.connections}{suffix}-{len(self._known)}"
        workers = max(1, len(spec.stack_cpus))
        warmup_s, window_s = ceiling_seconds(spec)
        generator = self.generator if protocol is Protocol.H1 else self.by_protocol
        try:
            tls = tls_material(self.tls_dir) if protocol.tls else None
            with NginxService(self.work_dir / label, workers=workers, protocol=protocol, tls=tls) as nginx:
                if spec.stack_cpus:
                    _pin(nginx.root_pids(), spec.stack_cpus)
                request = LoadRequest(
                    url=f"{protocol.scheme}://{HOST}:{nginx.info.port}{get_workload('static').path}",
                    connections=spec.connections, duration_s=warmup_s, cpus=spec.loadgen_cpus,
                    requests=spec.requests, timeout_s=self.timeout_s, keepalive=self.keepalive,
                    label=f"{label}.warmup", protocol=protocol,
                )
                generator.run(request, self.work_dir / label)
                window = LoadRequest(
                    url=request.url, connections=spec.connections, duration_s=window_s, cpus=spec.loadgen_cpus,
                    requests=spec.requests, timeout_s=self.timeout_s, keepalive=self.keepalive, label=label,
                    protocol=protocol,
                )
                load = generator.run(window, self.work_dir / label)
                version = nginx.info.version
        except (ServiceError, LoadGenError, OSError, RuntimeError) as exc:  # RuntimeError: no certificate
            problem = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            self.on_record(ServiceRecord("generator-ceiling", "", {
                "connections": spec.connections, "stack_cpus": list(spec.stack_cpus),
                "loadgen_cpus": list(spec.loadgen_cpus), "protocol": protocol.value, "error": problem,
            }))
            return CeilingReading(problem=problem)
        self.on_record(ServiceRecord("generator-ceiling", version, {
            "generator": load.generator, "protocol": protocol.value, "connections": spec.connections,
            "rps": round(load.rps, 1),
            "errors": load.errors, "nginx_workers": workers, "stack_cpus": list(spec.stack_cpus),
            "loadgen_cpus": list(spec.loadgen_cpus), "requests": spec.requests, "window_s": window_s,
        }))
        if not load.requests or load.errors:
            return CeilingReading(problem=f"nginx static answered {load.requests} requests with {load.errors} errors")
        return CeilingReading(rps=load.rps)
