"""ApacheBench: a fixed request count at fixed concurrency, as seeds 001 and 004 ran it.

ab's machine-readable outputs are used for latency (-e: percentiles at microsecond
precision; -g: one line per request for the mean, spread and 99.9th); its console summary
is read only for the counts it prints nowhere else (failed requests, non-2xx).
"""

from __future__ import annotations

import csv
import math
import os
import re
import shutil
import statistics
import subprocess
from typing import ClassVar
from pathlib import Path

from pywebbench.catalog.protocols import Protocol
from pywebbench.plan.generators import Capabilities, Mixes, Need
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import Latency, LoadResult, SocketErrors

DEFAULT_REQUESTS = 10_000


class ApacheBench:
    name = "ab"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=False, mixes=Mixes.ONE, fixed_count=True,
        protocols=frozenset({Protocol.H1}), remote_hosts=False,
        need=Need("ab", "ApacheBench, the seeds' fixed-count generator", "sudo apt-get install -y apache2-utils",
                  required=True))

    def __init__(self, binary: str = "ab") -> None:
        self.binary = binary

    def version(self) -> str:
        path = shutil.which(self.binary)
        if path is None:
            return "missing"
        done = subprocess.run([path, "-V"], capture_output=True, text=True, check=False)
        first = done.stdout.strip().splitlines()
        return first[0] if first else "unknown"

    def command(self, request: LoadRequest, percentiles: Path, per_request: Path) -> list[str]:
        count = request.requests or DEFAULT_REQUESTS
        argv = [
            *taskset_prefix(request.cpus),
            self.binary,
            "-q",
            "-r",  # count socket receive errors instead of aborting the run
            "-n", str(max(count, request.connections)),
            "-c", str(request.connections),
            "-s", str(max(1, math.ceil(request.timeout_s))),
            "-e", str(percentiles),
            "-g", str(per_request),
        ]
        if request.keepalive:
            argv.append("-k")
        return [*argv, request.url]

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        work_dir.mkdir(parents=True, exist_ok=True)
        percentiles = work_dir / f"{request.label}.ab.csv"
        per_request = work_dir / f"{request.label}.ab.tsv"
        argv = self.command(request, percentiles, per_request)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=f"{request.label}.ab")
        limit = max(60.0, request.duration_s * 10)
        with proc:
            try:
                code = proc.wait(timeout=limit)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError(f"ab did not finish within {limit:.0f}s") from exc
        console = proc.stdout_path.read_text(errors="replace")
        if code != 0 and "Complete requests" not in console:
            raise LoadGenError(f"ab {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        return parse_ab(
            console,
            percentiles.read_text() if percentiles.exists() else "",
            per_request.read_text() if per_request.exists() else "",
            tuple(argv),
        )


def _count(pattern: str, text: str) -> int:
    match = re.search(pattern, text)
    return int(match.group(1)) if match else 0


def parse_ab(console: str, percentile_csv: str, gnuplot: str, command: tuple[str, ...] = ()) -> LoadResult:
    """Build a LoadResult from ab's summary, its -e percentile CSV and its -g request log."""
    complete = _count(r"Complete requests:\s+(\d+)", console)
    taken = re.search(r"Time taken for tests:\s+([\d.]+) seconds", console)
    if taken is None:
        raise LoadGenError("ab printed no 'Time taken for tests' line")
    failed = re.search(
        r"\(Connect: (\d+), Receive: (\d+), Length: (\d+), Exceptions: (\d+)\)", console
    )
    connect, receive, _length, exceptions = (int(g) for g in failed.groups()) if failed else (0, 0, 0, 0)
    non_2xx = _count(r"Non-2xx responses:\s+(\d+)", console)
    timeouts = console.count("The timeout specified has expired")

    points: list[tuple[float, float]] = []
    for row in csv.reader(percentile_csv.splitlines()[1:]):
        if len(row) == 2:
            points.append((float(row[0]), float(row[1])))
    totals = _request_totals_ms(gnuplot)
    if totals:
        ordered = sorted(totals)
        p999 = ordered[min(len(ordered) - 1, math.ceil(0.999 * len(ordered)) - 1)]
        points = sorted([p for p in points if p[0] != 99.9] + [(99.9, p999)])
        mean = statistics.fmean(totals)
        stdev = statistics.pstdev(totals)
        maximum = ordered[-1]
    else:
        mean = stdev = 0.0
        maximum = points[-1][1] if points else 0.0
    return LoadResult(
        generator="ab",
        requests=complete,
        duration_s=float(taken.group(1)),
        socket_errors=SocketErrors(connect=connect, read=receive + exceptions, timeout=timeouts),
        non_2xx=non_2xx,
        latency=Latency(mean_ms=mean, stdev_ms=stdev, max_ms=maximum, percentiles=tuple(points)),
        bytes_read=_count(r"Total transferred:\s+(\d+) bytes", console),
        command=command,
    )


def _request_totals_ms(gnuplot: str) -> list[float]:
    """The 'ttime' column (total milliseconds) of ab's -g file, one row per request."""
    lines = gnuplot.splitlines()
    if not lines:
        return []
    header = lines[0].split("\t")
    if "ttime" not in header:
        return []
    column = header.index("ttime")
    return [float(line.split("\t")[column]) for line in lines[1:] if line.strip()]
