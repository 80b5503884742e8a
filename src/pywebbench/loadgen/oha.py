"""oha: closed loop like wrk, or open loop at a constant rate with coordinated-omission correction.

wrk is closed loop: a stalled server stalls its clients, so the requests they would have sent
during the stall are never sent and never measured. `oha -q RATE --latency-correction` keeps
a schedule instead and times each request from its intended send time, so a stall shows up
as the wait every scheduled request had.

Results come from two machine-readable files of the same run, never from the console:
the JSON summary (`--output-format json`: window, status codes, errors, bytes) and the
per-request SQLite log (`--db-url`, table `oha`: start, start_latency_correction, end,
duration, status, ...), from which both latencies are computed over the same spectrum wrk
reports. oha's JSON has only corrected percentiles, and only nine of them.

What a -z window leaves out, as wrk does: requests in flight at its end (oha's "aborted due
to deadline") and, in open loop, requests still queued on the schedule, never sent. When the
achieved rate (rps) falls short of `rate`, the server did not keep up and the tail is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from pywebbench.catalog.protocols import Protocol
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.core.errors import UserError
from pywebbench.stage.tools import locate
from pywebbench.loadgen.base import LoadGenError, LoadRequest, first_line_version, taskset_prefix, weighted_cycle
from pywebbench.plan.generators import (Capabilities, Loop, Mixes, Need, RequestKind, differ_only_in_path,
                                        request_kind)
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import Latency, LoadResult, SocketErrors

FloatArray = npt.NDArray[np.float64]

MS_PER_S = 1000.0
REPO_ROOT = Path(__file__).resolve().parents[3]

# The points wrk_report.lua asks wrk for (0 = min, 100 = max), so both generators'
# spectra line up point for point.
SPECTRUM: tuple[float, ...] = (0, 1, 5, 10, 20, 25, 30, 40, 50, 60, 70, 75, 80, 85, 90, 95, 97.5,
                               99, 99.5, 99.9, 99.95, 99.99, 100)

# oha's own message for requests cut off by the end of a -z window: an artifact of
# stopping on the clock (wrk drops those silently too), not a server failure.
DEADLINE_ERROR = "aborted due to deadline"


def oha_binary() -> str | None:
    """oha where the tool locator finds it (PATH, the copy scripts/install.sh builds, cargo's)."""
    return locate("oha")


@dataclass(frozen=True, eq=False)
class RequestLog:
    """oha's log of the answered requests of one run, as columns; seconds from its start."""

    sent_s: FloatArray
    intended_s: FloatArray
    """When the schedule meant to send each one; NaN in a run without --latency-correction."""
    end_s: FloatArray

    def __len__(self) -> int:
        return int(self.end_s.size)

    @staticmethod
    def joined(logs: Sequence[RequestLog]) -> RequestLog:
        """The logs of oha processes that loaded one window side by side (each from its own start,
        which differ by the milliseconds between launches: latencies are differences within a log)."""
        if len(logs) == 1:
            return logs[0]
        return RequestLog(*(np.concatenate([getattr(log, name) for log in logs])
                            for name in ("sent_s", "intended_s", "end_s")))


class Oha:
    name = "oha"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=True, mixes=Mixes.PATHS, fixed_count=False,
        protocols=frozenset({Protocol.H1}), remote_hosts=False,
        default_for=Loop.OPEN,
        need=Need("oha", "open-loop (constant-rate) generator with latency correction", "./scripts/install.sh"))

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or oha_binary() or "oha"

    def version(self) -> str:
        return first_line_version(self.binary)

    def command(self, request: LoadRequest, report: Path, db: Path) -> list[str]:
        if request.rate is not None and request.rate <= 0:
            # oha reads -q 0 as "no limit", which would silently turn the run closed-loop.
            raise UserError(f"request rate must be positive, got {request.rate:g}")
        argv = [
            *taskset_prefix(request.cpus),
            self.binary,
            "--no-tui",
            "--output-format", "json",
            "--output", str(report),
            "--db-url", str(db),
            # Tokio threads default to the machine's physical cores, not the CPUs we pin to.
            "--worker-threads", str(len(request.cpus) or len(os.sched_getaffinity(0))),
            "-c", str(request.connections),
            "-t", f"{max(1, round(request.timeout_s * MS_PER_S))}ms",
        ]
        if request.requests is not None:
            argv += ["-n", str(max(request.requests, 1))]
        else:
            argv += ["-z", f"{max(1, round(request.duration_s * MS_PER_S))}ms"]
        if request.rate is not None:
            # Open loop: -c now only caps requests in flight; when all are busy, the schedule
            # queues the rest and their wait counts in the corrected latency.
            argv += ["-q", repr(float(request.rate)), "--latency-correction"]
        if not request.keepalive:
            argv.append("--disable-keepalive")
        target = [request.url] if len(request.mix) <= 1 else ["--urls-from-file", str(urls_path(report))]
        return [*argv, *_request_flags(request, body_path(report)), *target]

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        if shutil.which(self.binary) is None:
            raise LoadGenError(f"oha not found ({self.binary}); fix: ./scripts/install.sh")
        work_dir.mkdir(parents=True, exist_ok=True)
        parts = [_Part.prepare(self, shape, work_dir) for shape in request_shapes(request)]
        with contextlib.ExitStack() as stack:
            procs = [stack.enter_context(part.process(work_dir)) for part in parts]
            codes = [_wait(proc, _time_limit(request)) for proc in procs]
        for part, proc, code in zip(parts, procs, codes, strict=True):
            if code != 0 or not part.report.exists() or not part.db.exists():
                raise LoadGenError(f"oha {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        summaries = [json.loads(part.report.read_text()) for part in parts]
        logs = [read_oha_db(part.db) for part in parts]
        command = tuple(word for part in parts for word in (*part.argv, ";"))[:-1]
        return parse_oha(merge_summaries(summaries), RequestLog.joined(logs), command, request.rate)


@dataclass(frozen=True)
class _Part:
    """One oha process of a window: its command and the two files it writes."""

    argv: tuple[str, ...]
    report: Path
    db: Path
    label: str

    @classmethod
    def prepare(cls, oha: Oha, request: LoadRequest, work_dir: Path) -> _Part:
        # oha takes the log's path as a URL: a '#' (an alias's trial id) would start its fragment
        stem = request.label.replace("#", "_").replace("?", "_")
        report, db = work_dir / f"{stem}.oha.json", work_dir / f"{stem}.oha.db"
        report.unlink(missing_ok=True)
        db.unlink(missing_ok=True)  # oha appends to an existing table, mixing runs
        if request.mix and request.mix[0].body:
            body_path(report).write_bytes(request.mix[0].body)
        if len(request.mix) > 1:
            urls_path(report).write_text(urls_text(request), encoding="utf-8")
        return cls(tuple(oha.command(request, report, db)), report, db, request.label)

    def process(self, work_dir: Path) -> ManagedProcess:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        return ManagedProcess(self.argv, env=env, log_dir=work_dir, name=f"{self.label}.oha")


def _wait(proc: ManagedProcess, limit_s: float) -> int:
    try:
        return proc.wait(timeout=limit_s)
    except subprocess.TimeoutExpired as exc:
        raise LoadGenError("oha did not finish in time") from exc


def request_shapes(request: LoadRequest) -> tuple[LoadRequest, ...]:
    """The window as one oha request per shape of its mix (method, headers and body), sent side
    by side: each with its shape's paths, its share of the offered rate and of the connections
    (by weight, at least one). oha sends one shape per process (the paths of a shape go in its
    URL file), and side by side at fixed rates the shares are the weights' exactly, which closed
    loop would not keep (wrk sends any mix closed loop), so only a window at a rate is split."""
    shapes: dict[RequestKind, list[HttpRequest]] = {}
    for one in request.mix:
        shapes.setdefault(request_kind(one), []).append(one)
    if len(shapes) <= 1:
        return (request,)
    if request.rate is None:
        raise UserError(f"oha sends a mix of {len(shapes)} kinds of request (method, headers or body) only at "
                        "an offered rate (--rate, --slo); wrk sends it closed loop")
    parts = urlsplit(request.url)
    total = sum(one.weight for one in request.mix)
    return tuple(
        replace(request, url=f"{parts.scheme}://{parts.netloc}{group[0].path}", mix=tuple(group),
                rate=request.rate * share, connections=max(1, round(request.connections * share)),
                label=f"{request.label}.shape{i}")
        for i, group in enumerate(shapes.values())
        for share in [sum(one.weight for one in group) / total])


def merge_summaries(summaries: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The JSON summaries of oha processes that loaded one window side by side, as one: status
    codes, errors and bytes summed, the window the longest of theirs."""
    if len(summaries) == 1:
        return dict(summaries[0])
    statuses: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    for summary in summaries:
        statuses.update({code: int(n) for code, n in summary["statusCodeDistribution"].items()})
        errors.update({message: int(n) for message, n in summary["errorDistribution"].items()})
    return {"statusCodeDistribution": dict(statuses), "errorDistribution": dict(errors),
            "summary": {"total": max(float(s["summary"]["total"]) for s in summaries),
                        "totalData": sum(int(s["summary"]["totalData"]) for s in summaries)}}


def body_path(report: Path) -> Path:
    """Where a window's request body is written for oha's -D."""
    return report.with_suffix(".body")


def urls_path(report: Path) -> Path:
    """Where a window's mix is written for oha's --urls-from-file."""
    return report.with_suffix(".urls")


def urls_text(request: LoadRequest) -> str:
    """One cycle of the window's mix as oha's URL file: each path its weight's times (reduced by
    their common divisor). oha draws every request's URL from the file at random, so each path
    is sent in proportion to its weight, give or take the draw (about 1% of a share at 10,000
    requests), where vegeta and wrk keep the exact order of a cycle."""
    parts = urlsplit(request.url)
    origin = f"{parts.scheme}://{parts.netloc}"
    return "".join(f"{origin}{request.mix[i].path}\n" for i in weighted_cycle([r.weight for r in request.mix]))


def _request_flags(request: LoadRequest, body: Path) -> list[str]:
    """A person's request (`app --request`) as oha's flags: its method, headers and body. One oha
    process sends requests that differ only in path (the paths in a URL file); `request_shapes`
    gives each kind of request of a mix its own process."""
    if not request.mix:
        return []
    if not differ_only_in_path(request.mix):
        raise ValueError(f"one oha process cannot send {len(request.mix)} requests that differ in more than "
                         "their path: request_shapes splits them")
    one = request.mix[0]
    headers = [arg for name, value in one.headers for arg in ("-H", f"{name}: {value}")]
    return ["-m", one.method, *headers, *(["-D", str(body)] if one.body else [])]


def _time_limit(request: LoadRequest) -> float:
    if request.requests is None:
        return request.duration_s + request.timeout_s + 30
    if request.rate is not None:
        return request.requests / request.rate + request.timeout_s + 30
    return max(60.0, request.duration_s * 10)  # a count at full speed: as long as ab may take


def read_oha_db(path: Path) -> RequestLog:
    """The answered requests of the one run in `path` (oha logs no failed ones there)."""
    with contextlib.closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as conn:
        try:
            rows = conn.execute("SELECT start, start_latency_correction, end FROM oha").fetchall()
        except sqlite3.Error as exc:
            raise LoadGenError(f"oha's request log {path} is unreadable: {exc}") from exc
    columns = np.array(rows, dtype=np.float64).reshape(-1, 3)  # NULL becomes NaN
    return RequestLog(sent_s=columns[:, 0], intended_s=columns[:, 1], end_s=columns[:, 2])


def parse_oha(
    report: Mapping[str, Any],
    log: RequestLog,
    command: tuple[str, ...] = (),
    rate: float | None = None,
) -> LoadResult:
    """Build a LoadResult from oha's JSON summary and its request log of the same run."""
    statuses = {int(code): int(count) for code, count in report["statusCodeDistribution"].items()}
    if sum(statuses.values()) != len(log):
        raise LoadGenError(f"oha's request log has {len(log)} requests, its summary "
                           f"{sum(statuses.values())}: not the same run")
    from_sent = latency_spectrum((log.end_s - log.sent_s) * MS_PER_S)
    if rate is None:
        latency, uncorrected = from_sent, None
    elif np.isnan(log.intended_s).any():
        raise LoadGenError("oha logged no intended send times; was --latency-correction dropped?")
    else:
        # The schedule's send time is taken when oha's ticker fires, so a starved generator
        # under-corrects slightly; it never over-corrects.
        latency, uncorrected = latency_spectrum((log.end_s - log.intended_s) * MS_PER_S), from_sent
    summary = report["summary"]
    return LoadResult(
        generator="oha",
        requests=len(log),
        duration_s=float(summary["total"]),
        socket_errors=socket_errors(report["errorDistribution"]),
        non_2xx=sum(count for code, count in statuses.items() if not 200 <= code < 300),
        latency=latency,
        bytes_read=int(summary["totalData"]),  # bodies only; wrk also counts headers
        command=command,
        rate=rate,
        latency_uncorrected=uncorrected,
    )


def latency_spectrum(ms: FloatArray) -> Latency:
    """The latency figures of `ms`, one per request, at the points of SPECTRUM (nearest rank)."""
    if ms.size == 0:
        return Latency(mean_ms=0.0, stdev_ms=0.0, max_ms=0.0, percentiles=())
    # inverted_cdf is the nearest-rank percentile, as wrk's HdrHistogram reports it.
    points = np.percentile(ms, SPECTRUM, method="inverted_cdf")
    return Latency(
        mean_ms=float(ms.mean()),
        stdev_ms=float(ms.std()),
        max_ms=round(float(ms.max()), 3),
        percentiles=tuple((float(p), round(float(v), 3)) for p, v in zip(SPECTRUM, points, strict=True)),
    )


_OS_ERROR = re.compile(r"\(os error \d+\)")


def socket_errors(distribution: Mapping[str, int]) -> SocketErrors:
    """Sort oha's error messages into wrk's four socket-error kinds.

    oha keys its errorDistribution by message. "timeout" is both its connect timeout and its
    request timeout (-t), which it does not tell apart. Plain OS errors ("Connection refused
    (os error 111)", "Too many open files (os error 24)") come only from opening the socket
    (hyper owns reads and writes after that), so they are connect errors, as are DNS
    failures. hyper's "error writing ..." is a write error; every other hyper message
    (connection closed before message completed, connection error, parse errors) arose while
    waiting for or reading an answer, so it is a read error. Deadline aborts are skipped.
    """
    connect = read = write = timeout = 0
    for message, count in distribution.items():
        text = message.lower()
        if message == DEADLINE_ERROR:
            continue
        if text == "timeout":
            timeout += count
        elif _OS_ERROR.search(text) or "dns" in text or ("connect" in text and "connection" not in text):
            connect += count
        elif "writing" in text:
            write += count
        else:
            read += count
    return SocketErrors(connect=connect, read=read, write=write, timeout=timeout)
