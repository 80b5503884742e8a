"""The generator's own ceiling: what it reaches against nginx serving a static file.

A Python stack close to that figure is measured by the generator, not by itself. The
ceiling is measured once per run for each generator setting that shapes it (connections,
the generator's and the stack's CPUs, keep-alive), with nginx pinned to the stack's CPUs
and given one worker per CPU, and recorded as a service record.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

import psutil

from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services import ServiceError
from pywebbench.services.nginx import BINARY, NginxService
from pywebbench.workloads import get_workload

HOST = "127.0.0.1"
WARMUP_S = 1.0
WINDOW_S = 2.0


def _pin(pids: tuple[int, ...], cpus: tuple[int, ...]) -> None:
    for pid in pids:
        try:
            root = psutil.Process(pid)
            for proc in (root, *root.children(recursive=True)):
                proc.cpu_affinity(list(cpus))
        except psutil.Error:
            pass  # pinning is best effort: an unpinned nginx only makes the ceiling higher


class GeneratorCeiling:
    """Callable per trial spec; memoised, so the cost is paid once per setting."""

    def __init__(
        self, generator: LoadGenerator, work_dir: Path, *, keepalive: bool = True, timeout_s: float = 5.0,
        on_record: Callable[[ServiceRecord], None] = lambda record: None,
        on_seconds: Callable[[float], None] = lambda seconds: None,
    ) -> None:
        self.generator = generator
        self.work_dir = work_dir
        self.keepalive = keepalive
        self.timeout_s = timeout_s
        self.on_record = on_record
        self.on_seconds = on_seconds
        self._known: dict[tuple[object, ...], float | None] = {}

    def __call__(self, spec: TrialSpec) -> float | None:
        if spec.rate is not None or not Path(BINARY).exists():
            return None  # open loop offers a fixed rate: there is no ceiling to approach
        key = (spec.connections, spec.loadgen_cpus, spec.stack_cpus, spec.requests)
        if key not in self._known:
            started = time.monotonic()
            self._known[key] = self._measure(spec)
            self.on_seconds(time.monotonic() - started)
        return self._known[key]

    def _measure(self, spec: TrialSpec) -> float | None:
        label = f"ceiling-c{spec.connections}-{len(self._known)}"
        workers = max(1, len(spec.stack_cpus))
        try:
            with NginxService(self.work_dir / label, workers=workers) as nginx:
                if spec.stack_cpus:
                    _pin(nginx.root_pids(), spec.stack_cpus)
                request = LoadRequest(
                    url=f"http://{HOST}:{nginx.info.port}{get_workload('static').path}",
                    connections=spec.connections, duration_s=WARMUP_S, cpus=spec.loadgen_cpus,
                    requests=spec.requests, timeout_s=self.timeout_s, keepalive=self.keepalive,
                    label=f"{label}.warmup",
                )
                self.generator.run(request, self.work_dir / label)
                window = LoadRequest(
                    url=request.url, connections=spec.connections, duration_s=WINDOW_S, cpus=spec.loadgen_cpus,
                    requests=spec.requests, timeout_s=self.timeout_s, keepalive=self.keepalive, label=label,
                )
                load = self.generator.run(window, self.work_dir / label)
                version = nginx.info.version
        except (ServiceError, LoadGenError, OSError):
            return None  # no ceiling known: the near-ceiling check is skipped, not failed
        self.on_record(ServiceRecord("generator-ceiling", version, {
            "generator": load.generator, "connections": spec.connections, "rps": round(load.rps, 1),
            "errors": load.errors, "nginx_workers": workers, "stack_cpus": list(spec.stack_cpus),
            "loadgen_cpus": list(spec.loadgen_cpus), "window_s": WINDOW_S,
        }))
        return load.rps if load.requests and not load.errors else None
