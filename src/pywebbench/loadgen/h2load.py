"""h2load (nghttp2), the generator of every protocol but h1 (catalog/protocols.py): HTTP/2 in the
clear by prior knowledge (an http:// URL), HTTP/2 over TLS by ALPN, HTTP/1.1 over TLS with --h1.

Closed loop: -c connections, -m streams each (one, so requests in flight equal connections, as
under wrk), -D seconds. It does not verify the server's certificate (the run's own, self-signed).
Its summary gives counts, req/s and the request time's min, max, mean and sd, and no percentile:
those are read from its --log-file, a line per finished request (start, status, microseconds to
the end of the answer), so a window's p99 is a quantile of every answer it timed.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
from dataclasses import dataclass
from typing import ClassVar
from pathlib import Path

from pywebbench.plan.generators import Capabilities, ChosenBy, Mixes, Need
from pywebbench.catalog.protocols import Protocol
from pywebbench.loadgen.base import LoadGenError, LoadRequest, first_line_version, taskset_prefix
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import Latency, LoadResult, SocketErrors

STREAMS = 1
"""Concurrent streams per HTTP/2 connection: one keeps a window's requests in flight at
--connections, as h1 has them, so protocols compare at the same concurrency."""
PERCENTILES = (50.0, 75.0, 90.0, 99.0, 99.9)
SPOKEN = {Protocol.H2C: "h2c", Protocol.H2_TLS: "h2", Protocol.H1_TLS: "http/1.1"}
"""How h2load names the protocol it spoke ("Application protocol: ..."): a server that would not
speak the one asked for fails the window instead of measuring another."""
_UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


class H2load:
    name = "h2load"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=False, mixes=Mixes.ONE, fixed_count=False,
        protocols=frozenset({Protocol.H2C, Protocol.H1_TLS, Protocol.H2_TLS}), remote_hosts=False,
        chosen_by=ChosenBy.PROTOCOL,
        need=Need("h2load", "sends the protocols h2c, h1-tls and h2-tls (--protocol)",
                  "sudo apt-get install -y nghttp2-client"))

    def __init__(self, binary: str = "h2load") -> None:
        self.binary = binary

    def version(self) -> str:
        return first_line_version(self.binary)

    def command(self, request: LoadRequest, log: Path) -> list[str]:
        threads = max(1, min(len(request.cpus) or 1, request.connections))
        argv = [
            *taskset_prefix(request.cpus), self.binary,
            "-c", str(request.connections), "-t", str(threads), "-m", str(STREAMS),
            "-D", str(max(1, math.ceil(request.duration_s))),  # whole seconds only
            "-N", str(max(1, math.ceil(request.timeout_s))),  # a connection silent this long is dropped
            f"--log-file={log}",
        ]
        if request.protocol is Protocol.H1_TLS:
            argv.append("--h1")  # offers only http/1.1 by ALPN
        return [*argv, request.url]

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        work_dir.mkdir(parents=True, exist_ok=True)
        log = work_dir / f"{request.label}.h2load.tsv"
        log.unlink(missing_ok=True)
        argv = self.command(request, log)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=f"{request.label}.h2load")
        with proc:
            try:
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("h2load did not finish in time") from exc
        summary = proc.stdout_path.read_text(errors="replace")
        if code != 0 or "finished in" not in summary:
            raise LoadGenError(f"h2load {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        result = parse_h2load(summary, log.read_text() if log.exists() else "", tuple(argv))
        expected = SPOKEN.get(request.protocol)
        if expected is not None and result.negotiated != expected:
            raise LoadGenError(f"h2load spoke {result.negotiated}, not {expected}: the server would not")
        return result.load


@dataclass(frozen=True)
class H2loadReport:
    load: LoadResult
    negotiated: str | None
    """The application protocol h2load says it spoke (h2c, h2, http/1.1); None if it says none."""


def _number(pattern: str, text: str) -> float:
    found = re.search(pattern, text)
    if found is None:
        raise LoadGenError(f"h2load's summary has no match for {pattern!r}")
    return float(found[1])


def _ms(text: str) -> float:
    found = re.fullmatch(r"([\d.]+)(us|ms|s)", text)
    if found is None:
        raise LoadGenError(f"h2load time {text!r} not understood")
    return float(found[1]) * _UNITS_MS[found[2]]


def log_percentiles(log: str) -> tuple[tuple[float, float], ...]:
    """(percentile, ms) of the request times in h2load's --log-file, nearest rank; () if empty."""
    rows = (line.split("\t") for line in log.splitlines())
    times = sorted(int(row[2]) for row in rows if len(row) >= 3)  # "more columns may be added later"
    if not times:
        return ()
    return tuple((p, times[max(0, math.ceil(p / 100 * len(times)) - 1)] / 1000.0) for p in PERCENTILES)


def parse_h2load(summary: str, log: str = "", command: tuple[str, ...] = ()) -> H2loadReport:
    """h2load's console summary (and its --log-file, for percentiles) as a LoadResult.

    requests is h2load's `done`; a 3xx, 4xx or 5xx answer is a non-2xx; a request that `failed`
    (reset, unreadable, dropped: never answered with a status) is a read error, and its timeouts
    are timeouts."""
    # h2load picks the unit: "finished in 1.00s", or ms/us when every connection failed at once
    finished = re.search(r"finished in ([\d.]+(?:us|ms|s))", summary)
    if finished is None:
        raise LoadGenError("h2load's summary has no 'finished in' time")
    seconds = _ms(finished[1]) / 1000.0
    done = int(_number(r"requests: .*?(\d+) done", summary))
    failed = int(_number(r"(\d+) failed", summary))
    timeouts = int(_number(r"(\d+) timeout", summary))
    statuses = re.search(r"status codes: (\d+) 2xx, (\d+) 3xx, (\d+) 4xx, (\d+) 5xx", summary)
    if statuses is None:
        raise LoadGenError("h2load's summary has no status codes line")
    times = re.search(r"time for request:\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)", summary)
    if times is None:
        raise LoadGenError("h2load's summary has no request times")
    traffic = re.search(r"traffic: \S+ \((\d+)\) total", summary)
    protocol = re.search(r"Application protocol: (\S+)", summary)
    load = LoadResult(
        generator="h2load",
        requests=done,
        duration_s=seconds,
        socket_errors=SocketErrors(read=max(0, failed - timeouts), timeout=timeouts),
        non_2xx=sum(int(statuses[i]) for i in (2, 3, 4)),
        latency=Latency(mean_ms=_ms(times[3]), stdev_ms=_ms(times[4]), max_ms=_ms(times[2]),
                        percentiles=log_percentiles(log)),
        bytes_read=int(traffic[1]) if traffic is not None else 0,
        command=command,
    )
    return H2loadReport(load, protocol[1] if protocol is not None else None)
