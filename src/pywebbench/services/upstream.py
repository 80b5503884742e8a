"""The slow upstream API (Go, reference/go/cmd/upstream) as a private service.

Every GET waits `delay_s` (or `?delay_ms=` for that request) and answers a fixed JSON body
of exactly `size_bytes`. It must never be the bottleneck, so the harness records its
ceiling (`measure_ceiling`) at the configured delay next to the results.
"""

from __future__ import annotations

import http.client
import os
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.loadgen.wrk import Wrk
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.results.model import LoadResult
from pywebbench.services import Service, HOST, ServiceError, tool_output, wait_until

READY_TIMEOUT_S = 10.0
WRK_BINARY = "/usr/bin/wrk"
MIN_SIZE_BYTES = len('{"data": ""}')
# "raw": the binary's minimal HTTP/1.1 engine, about half net/http's CPU per request;
# "std": Go's net/http. Same bytes either way.
ENGINES = ("raw", "std")


@dataclass(frozen=True)
class UpstreamInfo:
    """What a started upstream exposes, and what a result records about it."""

    host: str
    port: int
    url: str  # for apps: PWB_UPSTREAM_URL
    version: str  # e.g. "pwb-upstream go1.26.8"
    server: str  # the HTTP engine, one of ENGINES
    delay_s: float
    size_bytes: int
    cpus: tuple[int, ...]
    argv: tuple[str, ...]


@dataclass(frozen=True)
class UpstreamCeiling:
    """One wrk run straight against the upstream: the most it served at that delay."""

    delay_s: float
    connections: int
    duration_s: float
    rps: float
    errors: int
    load: LoadResult

    @property
    def ideal_rps(self) -> float | None:
        """The closed-loop bound connections / delay (None at zero delay): rps can't beat it."""
        return self.connections / self.delay_s if self.delay_s > 0 else None


class UpstreamService(Service[UpstreamInfo]):
    """`with UpstreamService(work_dir, binaries.upstream, 0.05, 1024) as up:` -> up.url."""

    what = "the upstream"

    def __init__(
        self,
        work_dir: Path,
        binary: Path,
        delay_s: float,
        size_bytes: int,
        cpus: tuple[int, ...] = (),
        server: str = "raw",
    ) -> None:
        super().__init__()
        if server not in ENGINES:
            raise ValueError(f"server must be one of {', '.join(ENGINES)}, got {server!r}")
        if delay_s < 0:
            raise ValueError(f"delay_s must be >= 0, got {delay_s}")
        if size_bytes < MIN_SIZE_BYTES:
            raise ValueError(f"size_bytes must be >= {MIN_SIZE_BYTES}, got {size_bytes}")
        self.work_dir = work_dir
        self.binary = binary
        self.delay_s = delay_s
        self.size_bytes = size_bytes
        self.cpus = tuple(cpus)
        self.server = server
        self.ceilings: list[UpstreamCeiling] = []


    @property
    def url(self) -> str:
        return self.info.url

    @property
    def port(self) -> int:
        return self.info.port

    @property
    def version(self) -> str:
        return self.info.version

    @property
    def proc(self) -> ManagedProcess:
        if self._proc is None:
            raise RuntimeError("the upstream is not running")
        return self._proc

    def config(self) -> dict[str, object]:
        """Plain data for a results file."""
        info = self.info
        return {
            "url": info.url, "version": info.version, "server": info.server, "delay_s": info.delay_s, "size_bytes": info.size_bytes,
            "cpus": list(info.cpus), "argv": list(info.argv),
            "ceilings": [
                {"delay_s": c.delay_s, "connections": c.connections, "duration_s": c.duration_s,
                 "rps": c.rps, "ideal_rps": c.ideal_rps, "errors": c.errors}
                for c in self.ceilings
            ],
        }

    def __enter__(self) -> UpstreamService:
        if not os.access(self.binary, os.X_OK):
            raise ServiceError(f"upstream binary {self.binary} is missing or not executable")
        with ExitStack() as stack:
            self.work_dir.mkdir(parents=True, exist_ok=True)
            port = free_port(HOST)
            argv = [
                *taskset_prefix(self.cpus), str(self.binary),
                "-host", HOST, "-port", str(port),
                "-delay", f"{round(self.delay_s * 1_000_000)}us", "-size", str(self.size_bytes),
                "-server", self.server,
            ]
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
            proc = ManagedProcess(argv, env=env, log_dir=self.work_dir, name="upstream", grace_s=2.0)
            stack.enter_context(proc)
            self._proc = proc
            self._pids.append(proc.pid)
            self._info = UpstreamInfo(
                HOST, port, f"http://{HOST}:{port}/", tool_output([str(self.binary), "-version"]),
                self.server, self.delay_s, self.size_bytes, self.cpus, tuple(argv),
            )
            stack.callback(self._forget)
            wait_until(self._answers, proc=proc, timeout_s=READY_TIMEOUT_S, what="upstream")
            self._stack = stack.pop_all()
        return self

    def restart(self) -> str:
        """The same command line and port: apps' PWB_UPSTREAM_URL stays right."""
        info = self.info
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = self._replace(ManagedProcess(info.argv, env=env, log_dir=self.work_dir,
                                            name=f"upstream-restart{self._restarts + 1}", grace_s=2.0))
        wait_until(self._answers, proc=proc, timeout_s=READY_TIMEOUT_S, what="upstream")
        return f"from its command line, port {info.port}"

    def get(self, delay_s: float | None = None, timeout_s: float = 10.0) -> tuple[int, bytes]:
        """One request on a fresh connection: (status, body)."""
        path = "/" if delay_s is None else f"/?delay_ms={_ms(delay_s)}"
        conn = http.client.HTTPConnection(HOST, self.info.port, timeout=timeout_s)
        try:
            conn.request("GET", path)
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def measure_ceiling(
        self,
        duration_s: float,
        connections: int,
        *,
        delay_s: float | None = None,
        wrk_cpus: tuple[int, ...] | None = None,
        work_dir: Path | None = None,
    ) -> float:
        """Requests/s real wrk gets from the upstream alone, at the configured delay (or delay_s).

        wrk runs one thread per CPU in `wrk_cpus` (default: every CPU we may use). The ideal is
        connections / delay; a figure far above the app's throughput shows the upstream was
        never the bottleneck. The full result is appended to `self.ceilings`.
        """
        delay = self.delay_s if delay_s is None else delay_s
        url = self.url if delay_s is None else f"{self.url}?delay_ms={_ms(delay)}"
        cpus = tuple(sorted(os.sched_getaffinity(0))) if wrk_cpus is None else wrk_cpus
        label = f"upstream-ceiling-{len(self.ceilings)}"
        request = LoadRequest(url=url, connections=connections, duration_s=duration_s, cpus=cpus, label=label)
        wrk = Wrk(WRK_BINARY if os.access(WRK_BINARY, os.X_OK) else "wrk")
        try:
            load = wrk.run(request, work_dir or self.work_dir / "ceiling")
        except LoadGenError as exc:
            raise ServiceError(f"measuring the upstream ceiling failed: {exc}") from exc
        if load.requests == 0:
            raise ServiceError(f"the upstream answered no request in {duration_s:g}s", self.proc.stderr_tail())
        self.ceilings.append(UpstreamCeiling(delay, connections, load.duration_s, load.rps, load.errors, load))
        return load.rps

    def _answers(self) -> bool:
        try:
            status, body = self.get(delay_s=0.0, timeout_s=1.0)
        except OSError:
            return False
        if status != 200 or len(body) != self.size_bytes:
            raise ServiceError(f"upstream answered {status} with {len(body)} bytes, want 200 and {self.size_bytes}")
        return True

    def _forget(self) -> None:
        self._info = None
        self._proc = None


def _ms(seconds: float) -> str:
    """Seconds as a plain decimal number of milliseconds (microsecond precision) for ?delay_ms=."""
    return f"{seconds * 1000:.3f}".rstrip("0").rstrip(".")
