"""vegeta: open loop at a constant rate for a weighted request mix (oha sends a mix only of paths).

`vegeta attack` reads a targets file in its http format (a request line, header lines, an
`@file` body line, a blank line between targets) and cycles through the targets in file
order, each worker taking the next one; the file holds one cycle of the mix, each request
`weight` times in a smooth weighted round-robin order, so every cycle sends the mix exactly
and the requests of a heavy weight are spread through it rather than in a run.

Open loop: `-rate` schedules the n-th request (n from 0) at (n+1)/rate after the attack
began, whatever the server does, and each request goes to its own worker. `-max-workers`
is the window's connections, so, as for oha's -c, it caps the requests in flight: when all
are busy, the schedule waits and the queued requests go out as workers free up. vegeta
times each request from when a worker took it, which hides that wait (coordinated
omission), so `latency` here is measured from each request's intended send time instead,
from its sequence number: end - (began + (seq+1)/rate), `began` being the attack's start as
the earliest send allows (no request goes out before its time), for the requests whose
intended time found every worker busy: the wait the server caused. A request that went
out late with a worker free was late by the generator's own pacing (Go's timers oversleep
by tens to hundreds of microseconds: at 2,500 req/s counting that put the p50 at 0.73 ms
where oha's corrected one read 0.19, docs/results/vegeta), and is timed from its send.
vegeta's own figure, every request from its send, is `latency_uncorrected`.

Results come from machine-readable files of the same run: vegeta's JSON report (requests,
status codes, the window: first send to last answer) and the run's results encoded as CSV
(`vegeta encode -to csv`: one line per request with its send time, status, latency, error
and sequence number), from which the whole spectrum is computed, as for oha; vegeta's own
percentiles are t-digest estimates at four points. Response bodies are not kept
(`-max-body 0`), so `bytes_read` is 0.

Without a rate (`--generator vegeta` closed loop) vegeta runs `-rate 0` with `connections`
workers, each sending its next request when the last is answered, like wrk.
"""

from __future__ import annotations

import csv
import json
import math
import os
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import urlsplit

import numpy as np
import numpy.typing as npt

from pywebbench.catalog.protocols import Protocol
from pywebbench.plan.generators import Capabilities, Mixes, Need
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadGenError, LoadRequest, taskset_prefix, weighted_cycle
from pywebbench.loadgen.oha import latency_spectrum
from pywebbench.core.procs import ManagedProcess, describe_exit
from pywebbench.results.model import LoadResult, SocketErrors
from pywebbench.stage.tools import locate
from pywebbench.stage.vegeta import module_version

NS_PER_MS = 1e6
NS_PER_S = 1e9
MS_PER_S = 1000.0


def vegeta_binary() -> str | None:
    """vegeta where the tool locator finds it (PATH, the copy scripts/install.sh builds)."""
    return locate("vegeta")


def unsendable(mix: Sequence[HttpRequest]) -> str | None:
    """Why vegeta's http targets format cannot carry a request of `mix`, or None."""
    for r in mix:
        for name, value in r.headers:
            if not value.strip() or name.startswith("#"):
                return f"{r.label}: header {name}:{value} (vegeta's targets take a name and a non-empty value)"
    return None


def targets_text(mix: Sequence[HttpRequest], origin: str, bodies: Mapping[int, Path]) -> str:
    """The targets file of one cycle of `mix` at `origin` (scheme://host:port); bodies[i] is
    where request i's body was written."""
    blocks = []
    for index in weighted_cycle([r.weight for r in mix]):
        r = mix[index]
        lines = [f"{r.method} {origin}{r.path}", *(f"{name}: {value}" for name, value in r.headers)]
        if index in bodies:
            lines.append(f"@{bodies[index]}")
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def rate_flag(rate: float) -> tuple[str, int]:
    """vegeta's -rate for `rate` req/s (a whole frequency per period), and the schedule's
    interval in ns as vegeta computes it (the period's ns // the frequency)."""
    if not rate > 0 or not math.isfinite(rate):
        raise UserError(f"request rate must be positive, got {rate:g}")  # -rate 0 means "no limit"
    if float(rate).is_integer():
        return f"{int(rate)}/1s", int(NS_PER_S) // int(rate)
    freq = max(1, round(rate * 1000))
    return f"{freq}/1000s", int(1000 * NS_PER_S) // freq


@dataclass(frozen=True, eq=False)
class Records:
    """One line per request of a run (vegeta encode -to csv), as columns; times in ns."""

    sent_ns: npt.NDArray[np.int64]
    code: npt.NDArray[np.int64]
    latency_ns: npt.NDArray[np.int64]
    seq: npt.NDArray[np.int64]
    errors: tuple[str, ...]
    """The error of each request that got no answer (code 0)."""

    def __len__(self) -> int:
        return int(self.sent_ns.size)


def read_records(path: Path) -> Records:
    """The CSV lines of `vegeta encode -to csv` (timestamp, code, latency, bytes out, bytes in,
    error, body, attack, seq, method, url, headers)."""
    sent, code, latency, seq, errors = [], [], [], [], []
    try:
        with path.open(newline="") as f:
            for row in csv.reader(f):
                if len(row) < 9:
                    raise LoadGenError(f"vegeta's results {path}: a line of {len(row)} fields, not 12")
                sent.append(int(row[0]))
                code.append(int(row[1]))
                latency.append(int(row[2]))
                seq.append(int(row[8]))
                if int(row[1]) == 0:
                    errors.append(row[5])
    except (OSError, ValueError) as exc:
        raise LoadGenError(f"vegeta's results {path} are unreadable: {exc}") from exc
    return Records(_column(sent), _column(code), _column(latency), _column(seq), tuple(errors))


def _column(values: list[int]) -> npt.NDArray[np.int64]:
    return np.array(values, dtype=np.int64)


class Vegeta:
    name = "vegeta"
    capabilities: ClassVar[Capabilities] = Capabilities(
        closed_loop=True, open_loop=True, mixes=Mixes.ANY, fixed_count=False,
        protocols=frozenset({Protocol.H1}), remote_hosts=False,
        need=Need("vegeta", "open-loop generator, optional (--generator vegeta; oha sends every mix by default)",
                  "./scripts/install.sh"))

    def __init__(self, binary: str | None = None) -> None:
        self.binary = binary or vegeta_binary() or "vegeta"

    def version(self) -> str:
        path = shutil.which(self.binary)
        if path is None:
            return "missing"
        found = module_version(path)
        if found is None:  # a release build stamps its version into -version instead
            done = subprocess.run([path, "-version"], capture_output=True, text=True, check=False)
            found = next((line.split(":", 1)[1].strip() for line in done.stdout.splitlines()
                          if line.startswith("Version:") and line.split(":", 1)[1].strip()), "unknown")
        return f"vegeta {found}"

    def command(self, request: LoadRequest, targets: Path, results: Path) -> list[str]:
        workers = str(max(1, request.connections))
        rate = rate_flag(request.rate)[0] if request.rate is not None else "0"
        argv = [
            *taskset_prefix(request.cpus),
            self.binary, "attack",
            "-targets", str(targets), "-format", "http", "-output", str(results),
            "-rate", rate,
            "-duration", f"{max(1, round(request.duration_s * MS_PER_S))}ms",
            "-timeout", f"{max(1, round(request.timeout_s * MS_PER_S))}ms",
            # In flight at most `connections`, as oha's -c (see the module doc); each worker keeps its connection.
            "-workers", workers, "-max-workers", workers, "-connections", workers, "-max-connections", workers,
            "-max-body", "0", "-redirects", "-1",
        ]
        if not request.keepalive:
            argv.append("-keepalive=false")
        return argv

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        if shutil.which(self.binary) is None:
            raise LoadGenError(f"vegeta not found ({self.binary}); fix: ./scripts/install.sh")
        if request.requests is not None:
            raise LoadGenError("vegeta runs for a duration, not a request count (use ab or oha for -n)")
        work_dir.mkdir(parents=True, exist_ok=True)
        stem = f"{request.label}.vegeta"
        targets, results = work_dir / f"{stem}.targets", work_dir / f"{stem}.bin"
        report, table = work_dir / f"{stem}.json", work_dir / f"{stem}.csv"
        for old in (results, report, table):
            old.unlink(missing_ok=True)
        targets.write_text(self.targets(request, work_dir / stem), encoding="utf-8")
        argv = self.command(request, targets, results)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}  # no HTTP_PROXY: vegeta honours it
        proc = ManagedProcess(argv, env=env, log_dir=work_dir, name=f"{request.label}.vegeta")
        with proc:
            try:
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError("vegeta did not finish in time") from exc
        if code != 0 or not results.exists():
            raise LoadGenError(f"vegeta {describe_exit(code)}: {proc.stderr_tail(5)}".rstrip(": "))
        self._convert(["report", "-type", "json", "-output", str(report), str(results)])
        self._convert(["encode", "-to", "csv", "-output", str(table), str(results)])
        interval = rate_flag(request.rate)[1] if request.rate is not None else None
        return parse_vegeta(json.loads(report.read_text()), read_records(table), tuple(argv), request.rate, interval,
                            workers=max(1, request.connections))

    def targets(self, request: LoadRequest, stem: Path) -> str:
        """The window's targets file; each request's body is written beside it once (`stem`.bodyN)."""
        parts = urlsplit(request.url)
        mix = request.mix or (HttpRequest("GET", (parts.path or "/") + (f"?{parts.query}" if parts.query else "")),)
        if (why := unsendable(mix)) is not None:
            raise LoadGenError(why)
        bodies = {}
        for index, r in enumerate(mix):
            if r.body:
                bodies[index] = stem.parent / f"{stem.name}.body{index}"
                bodies[index].write_bytes(r.body)
        return targets_text(mix, f"{parts.scheme}://{parts.netloc}", bodies)

    def _convert(self, args: list[str]) -> None:
        """`vegeta report` or `vegeta encode` over a finished run's results file."""
        try:
            done = subprocess.run([self.binary, *args], capture_output=True, text=True, check=False, timeout=120,
                                  env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise LoadGenError(f"vegeta {args[0]} failed: {exc}") from exc
        if done.returncode != 0:
            raise LoadGenError(f"vegeta {args[0]} exited with code {done.returncode}: {done.stderr.strip()[-300:]}")


def waited_for_a_worker(records: Records, intended_ns: npt.NDArray[np.int64], workers: int) -> npt.NDArray[np.bool_]:
    """Per request: were `workers` requests in flight at its intended send time (it queued)?"""
    starts = np.sort(records.sent_ns)
    ends = np.sort(records.sent_ns + records.latency_ns)
    in_flight = np.searchsorted(starts, intended_ns, side="right") - np.searchsorted(ends, intended_ns, side="right")
    return np.asarray(in_flight >= workers)


@dataclass(frozen=True, eq=False)
class Due:
    """When each request of a run was due, and whether it waited for a busy worker."""

    began: int
    """The attack's start (ns), as the earliest send allows: no request goes out before its time."""
    intended: npt.NDArray[np.int64]
    """Each request's intended send time (ns)."""
    queued: npt.NDArray[np.bool_]
    """Found every worker busy at its intended time (the wait the server caused)."""
    start: npt.NDArray[np.int64]
    """Where its corrected latency is timed from: its intended time if it queued, else its send."""


def due_times(records: Records, due_ns: npt.NDArray[np.int64], workers: int | None) -> Due:
    """Each request's intended time from its offset after the attack began (`due_ns`, by request),
    and its corrected start; `workers` None: every late request counts as queued."""
    began = int((records.sent_ns - due_ns).min()) if len(records) else 0
    intended = began + due_ns
    queued = (np.ones(len(records), dtype=bool) if workers is None
              else waited_for_a_worker(records, intended, workers))
    start = np.where(queued, np.minimum(intended, records.sent_ns), records.sent_ns)
    return Due(began, intended, queued, start)


def parse_vegeta(report: Mapping[str, Any], records: Records, command: tuple[str, ...] = (),
                 rate: float | None = None, interval_ns: int | None = None, workers: int | None = None) -> LoadResult:
    """Build a LoadResult from vegeta's JSON report and the CSV records of the same run.

    `workers`: the cap on requests in flight; a late request is timed from its intended send
    only where it found them all busy (None: every late request is, the generator's own
    lateness included)."""
    if int(report["requests"]) != len(records):
        raise LoadGenError(f"vegeta's results have {len(records)} requests, its report {report['requests']}: "
                           "not the same run")
    answered = records.code != 0
    statuses = records.code[answered]
    from_sent = latency_spectrum(records.latency_ns[answered] / NS_PER_MS)
    if rate is None:
        latency, uncorrected = from_sent, None
    else:
        if interval_ns is None:
            interval_ns = rate_flag(rate)[1]
        due = due_times(records, (records.seq + 1) * interval_ns, workers)  # after the attack began
        end = records.sent_ns + records.latency_ns
        latency, uncorrected = latency_spectrum((end - due.start)[answered] / NS_PER_MS), from_sent
    window_ns = int(report.get("duration", 0)) + int(report.get("wait", 0))  # first send to last answer
    return LoadResult(
        generator="vegeta",
        requests=int(answered.sum()),
        duration_s=window_ns / NS_PER_S,
        socket_errors=socket_errors(records.errors),
        non_2xx=int(((statuses < 200) | (statuses >= 300)).sum()),
        latency=latency,
        bytes_read=int(report.get("bytes_in", {}).get("total", 0)),
        command=command,
        rate=rate,
        latency_uncorrected=uncorrected,
    )


def socket_errors(errors: Sequence[str]) -> SocketErrors:
    """Sort Go's net/http errors of unanswered requests into wrk's four socket-error kinds.

    A timeout is the client's (`Client.Timeout exceeded`, `context deadline exceeded`, an
    `i/o timeout`); a `dial` error (refused, too many open files) is a connect error; a failed
    `write` (a broken pipe) a write error; anything else (EOF, a reset, a malformed answer)
    arose while waiting for or reading the answer, so it is a read error. Answered requests
    with a bad status are not here: vegeta logs their status line as their error too, and they
    count in non_2xx instead.
    """
    connect = read = write = timeout = 0
    for message in errors:
        text = message.lower()
        if "timeout" in text or "deadline exceeded" in text:
            timeout += 1
        elif "dial " in text or "connect:" in text:
            connect += 1
        elif "write " in text or "broken pipe" in text:
            write += 1
        else:
            read += 1
    return SocketErrors(connect=connect, read=read, write=write, timeout=timeout)
