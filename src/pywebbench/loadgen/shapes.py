"""shapes: the Go driver of the connection shapes no HTTP generator sends (idle, sse, ws-echo).

One Go command (stage/reference/go/cmd/shapes, built with the reference binaries) with a
subcommand per shape: it opens the window's connections first (not timed), measures for the
window's duration, and writes one JSON result, read here into the LoadResult every generator
returns. `requests` counts the shape's units (the active requests beside the idle connections,
events delivered, messages echoed), `latency` is theirs (from each active request's intended
send time; each event's delivery from its send stamp; each echo's round trip), and
`LoadResult.shape` holds the connections asked for, held, refused and closed, the file limits,
and for idle the server's memory before and once its idle connections were open.
"""

from __future__ import annotations

import json
import math
import os
import resource
import subprocess
from pathlib import Path
from typing import Any, ClassVar

from pywebbench.catalog.protocols import Protocol
from pywebbench.plan.generators import Capabilities, ChosenBy, Mixes, built_with_go
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import Latency, LoadResult, SocketErrors
from pywebbench.results.shapes import ShapeFigures
from pywebbench.stage.envs import cache_root
from pywebbench.stage.reference import GoBuildError, build_go_binaries
from pywebbench.stage.tools import locate

WEBSOCKET_LIBRARY = "github.com/gorilla/websocket v1.5.3"
"""The WebSocket client and echo server of the Go command (stage/reference/go/go.mod pins it)."""
MS_PER_S = 1000.0
DIALERS = 256
"""Connections the driver opens at once (its -dialers): enough to open 10,000 in seconds, few
enough that a server's accept backlog (2,048 for most here) is not flooded."""


def shapes_binary() -> Path | None:
    """The shapes command, built with the Go reference binaries (once per source and toolchain)."""
    try:
        return build_go_binaries(cache_root() / "go").shapes
    except GoBuildError:
        return None


def shapes_available() -> bool:
    """Go is there to build the shapes command (doctor's requirement)."""
    return locate("go") is not None


def _ms(seconds: float) -> str:
    return f"{max(1, round(seconds * MS_PER_S))}ms"


class Shapes:
    name = "shapes"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=False, mixes=Mixes.ONE, fixed_count=False,
        protocols=frozenset({Protocol.H1}), remote_hosts=False,
        chosen_by=ChosenBy.SHAPE,
        need=built_with_go("drives the connection shapes idle, sse and ws-echo, built from the Go reference "
                           "sources on first use"))

    def __init__(self, binary: str | None = None) -> None:
        self._binary = binary

    def binary(self) -> str:
        if self._binary is None:
            found = shapes_binary()
            if found is None:
                raise LoadGenError("the shapes command could not be built: Go >= 1.22 is needed (./scripts/install.sh)")
            self._binary = str(found)
        return self._binary

    def version(self) -> str:
        return f"shapes (Go reference module, {WEBSOCKET_LIBRARY})"

    def command(self, request: LoadRequest, out: Path) -> list[str]:
        drive = request.drive
        if drive is None or drive.command is None:
            raise LoadGenError("the shapes driver sends the connection shapes only (idle, sse, ws-echo)")
        argv = [*taskset_prefix(request.cpus), self.binary(), drive.command, "-url", request.url,
                "-connections", str(request.connections), "-duration", _ms(request.duration_s),
                "-timeout", _ms(request.timeout_s), "-dialers", str(DIALERS), "-out", str(out)]
        if request.server_pids:
            argv += ["-pids", ",".join(map(str, request.server_pids))]
        return [*argv, *(word for flag in drive.flags for word in flag)]

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        work_dir.mkdir(parents=True, exist_ok=True)
        out = work_dir / f"{request.label}.shapes.json"
        out.unlink(missing_ok=True)
        argv = self.command(request, out)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # nothing else of the harness's environment
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=f"{request.label}.shapes")
        with proc:
            try:
                code = proc.wait(timeout=wait_bound_s(request))
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("the shapes driver did not finish in time") from exc
        if code != 0 or not out.exists():
            raise LoadGenError(f"shapes {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        return parse_shapes(json.loads(out.read_text()), tuple(argv))


def wait_bound_s(request: LoadRequest) -> float:
    """How long the driver may take before it is given up: opening the connections comes before
    the window, DIALERS at a time, each batch up to a connect and an answer's timeout when the
    server stops accepting (Granian's backpressure left 10,000 connections 85 s short of the old
    bound, a fixed four timeouts); then the window, and the driver's own margin."""
    batches = math.ceil(request.connections / DIALERS)
    return batches * 2 * request.timeout_s + request.duration_s + 4 * request.timeout_s + 60


def parse_shapes(data: dict[str, Any], command: tuple[str, ...] = ()) -> LoadResult:
    """The Go driver's JSON as a LoadResult (its wrong answers and bad echoes count as non-2xx)."""
    errors, lat, held = data["errors"], data["latency_ms"], data["connections"]
    memory = data.get("memory") or {}
    figures = ShapeFigures(
        tool=str(data["tool"]), asked=int(held["asked"]), held=int(held["held"]), refused=int(held["refused"]),
        closed=int(held["closed"]), open_s=float(held["open_s"]), nofile=int(data["nofile"]),
        server_nofile=memory.get("server_nofile"), rss_base_kb=memory.get("rss_base_kb"),
        rss_held_kb=memory.get("rss_held_kb"), rss_end_kb=memory.get("rss_end_kb"),
        sock_pages_base=memory.get("sock_pages_base"), sock_pages_held=memory.get("sock_pages_held"),
        tcp_inuse_base=memory.get("tcp_inuse_base"), tcp_inuse_held=memory.get("tcp_inuse_held"),
        page_kb=resource.getpagesize() // 1024,
    )
    return LoadResult(
        generator="shapes",
        requests=int(data["requests"]),
        duration_s=float(data["duration_s"]),
        socket_errors=SocketErrors(connect=int(errors["connect"]), read=int(errors["read"]),
                                   write=int(errors["write"]), timeout=int(errors["timeout"])),
        non_2xx=int(data["wrong"]),
        latency=Latency(mean_ms=float(lat["mean"]), stdev_ms=float(lat["stdev"]), max_ms=float(lat["max"]),
                        percentiles=tuple((float(p), float(v)) for p, v in lat["percentiles"])),
        bytes_read=int(data["bytes_read"]),
        command=command,
        rate=float(data["rate"]) if data.get("rate") is not None else None,
        shape=figures,
    )
