"""wrk on a generator host, driven over SSH; its Lua report parsed exactly as a local run's.

The report script and the JSON it writes live in a remote work directory; the JSON comes back
over the same connection (on the netns rig the paths are shared, so nothing is copied).
Several generator hosts load one window together (`run_together`): each waits on its own
clock for one agreed start instant (the barrier), records when it really began, and sends its
raw latency record back, so the merged percentiles come from the data, not from averages.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from importlib import resources
from pathlib import Path

from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.loadgen.merge import Histogram, merge_results, parse_histogram
from pywebbench.loadgen.wrk import Wrk, parse_wrk_report
from pywebbench.results.model import LoadResult
from pywebbench.stage.ssh import RemoteProcess, SshConnection, SshError

_AT = """
import resource, subprocess, sys, time
at = float(sys.argv[1])
if at > 0:
    time.sleep(max(0.0, at - time.time()))
print(repr(time.time()), flush=True)
code = subprocess.call(sys.argv[2:])
used = resource.getrusage(resource.RUSAGE_CHILDREN)
print("cpu=" + repr(used.ru_utime + used.ru_stime), flush=True)
sys.exit(code if code >= 0 else 128 - code)
"""
"""Waits for the agreed instant on this host's clock (0: at once), says when wrk went, runs it
(in the same process group, so a stop reaches it) and says how much CPU it used on that host."""


@dataclass(frozen=True)
class Started:
    proc: RemoteProcess
    request: LoadRequest
    report: str
    work_dir: Path
    argv: tuple[str, ...]


@dataclass(frozen=True)
class GeneratorRun:
    host: str
    result: LoadResult
    histogram: Histogram | None
    started_at: float | None
    """When wrk began on that host's clock."""
    cpu_s: float | None = None
    """wrk's CPU time on its host (user + system), for the saturation check."""
    threads: int = 1

    @property
    def busy(self) -> float | None:
        """wrk's CPU use as a fraction of its threads' worth of CPUs over the window."""
        if self.cpu_s is None or self.result.duration_s <= 0:
            return None
        return self.cpu_s / (self.result.duration_s * self.threads)


@dataclass(frozen=True)
class MergedRun:
    result: LoadResult
    parts: tuple[GeneratorRun, ...]
    start_at: float
    """The agreed instant (our clock)."""

    def saturated(self, busy: float) -> tuple[str, ...]:
        """Generator hosts whose wrk used more than `busy` of its threads' CPUs: they measured themselves."""
        return tuple(p.host for p in self.parts if p.busy is not None and p.busy > busy)

    @property
    def start_spread_s(self) -> float:
        """How far apart the generators really began (the barrier's precision)."""
        times = [p.started_at for p in self.parts if p.started_at is not None]
        return max(times) - min(times) if times else 0.0


class RemoteWrk:
    """wrk on `conn`'s host: `run` has the LoadGenerator signature, the load leaves from there."""

    name = "wrk"

    def __init__(self, conn: SshConnection, remote_dir: str, binary: str = "wrk", clock_offset_s: float = 0.0) -> None:
        self.conn = conn
        self.remote_dir = remote_dir
        self.wrk = Wrk(binary)
        self.clock_offset_s = clock_offset_s
        """That host's clock minus ours (doctor's measurement): a barrier instant is moved by it."""

    def version(self) -> str:
        done = self.conn.run([self.wrk.binary, "-v"], check=False, timeout=15)
        first = (done.stdout or done.stderr).strip().splitlines()
        return first[0] if first else "unknown"

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        return self.collect(self.start(request, work_dir)).result

    def prepare(self, request: LoadRequest) -> None:
        """The report script in place and no old report: what `start` needs, done ahead of a barrier."""
        lua = resources.files("pywebbench.loadgen").joinpath("wrk_report.lua").read_text(encoding="utf-8")
        try:
            self.conn.run(["mkdir", "-p", self.remote_dir])
            self.conn.run_line(f"cat > {self.remote_dir}/wrk_report.lua <<'PWB_LUA'\n{lua}\nPWB_LUA")
            self.conn.run(["rm", "-f", f"{self.remote_dir}/{request.label}.wrk.json"])
        except SshError as exc:
            raise LoadGenError(f"generator host: {exc}") from None

    def start(self, request: LoadRequest, work_dir: Path, *, start_at: float | None = None,
              histogram: bool = False, prepared: bool = False) -> Started:
        work_dir.mkdir(parents=True, exist_ok=True)
        script = f"{self.remote_dir}/wrk_report.lua"
        report = f"{self.remote_dir}/{request.label}.wrk.json"
        if not prepared:
            self.prepare(request)
        argv = self.wrk.command(request, Path(script))
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "PYWEBBENCH_WRK_REPORT": report}
        if histogram:
            env["PYWEBBENCH_WRK_HISTOGRAM"] = "1"
        at = 0.0 if start_at is None else start_at + self.clock_offset_s
        launched = ["python3", "-c", _AT, repr(at), *argv]
        proc = self.conn.spawn(launched, name=f"{request.label}.wrk", remote_dir=self.remote_dir,
                               local_log_dir=work_dir, env=env)
        return Started(proc, request, report, work_dir, tuple(argv))

    def collect(self, started: Started) -> GeneratorRun:
        request, proc = started.request, started.proc
        with proc:
            try:
                code = proc.wait(timeout=request.duration_s + request.timeout_s + 30)
            except subprocess.TimeoutExpired as exc:
                raise LoadGenError(f"wrk on {self.conn.name} did not finish in time") from exc
        text = self._read(started.report, started.work_dir / f"{request.label}.wrk.json")
        out, err = proc.fetch_logs()
        if code != 0 or not text:
            raise LoadGenError(f"wrk on {self.conn.name} exited with {code}: {_tail(err)}".rstrip(": "))
        lines = [json.loads(line) for line in text.splitlines() if line.strip()]
        result = parse_wrk_report(lines[0], started.argv)
        histogram = next((parse_histogram(d["histogram_us"]) for d in lines[1:] if "histogram_us" in d), None)
        started_at, cpu = _wrapper_lines(out)
        threads = max(1, min(len(request.cpus) or 1, request.connections))
        return GeneratorRun(self.conn.name, result, histogram, started_at, cpu, threads)

    def _read(self, remote: str, local: Path) -> str:
        try:
            if self.conn.target.shared_fs:
                return Path(remote).read_text()
            self.conn.fetch(remote, local)
            return local.read_text()
        except (OSError, SshError):
            return ""


def run_together(generators: Sequence[RemoteWrk], request: LoadRequest, work_dir: Path,
                 lead_s: float = 2.0) -> MergedRun:
    """Every generator on the same window: one start instant `lead_s` ahead (time for each SSH
    start, once the scripts are in place), then the results merged (requests and throughput summed, percentiles from raw data)."""
    labelled = [replace(request, label=f"{request.label}-{i}") for i in range(len(generators))]
    with ThreadPoolExecutor(max_workers=len(generators)) as pool:
        list(pool.map(lambda pair: pair[0].prepare(pair[1]), zip(generators, labelled)))
        start_at = time.time() + lead_s
        futures = [pool.submit(g.start, r, work_dir, start_at=start_at, histogram=True, prepared=True)
                   for g, r in zip(generators, labelled)]
        starts, failed = [], None
        for future in futures:
            try:
                starts.append(future.result())
            except (LoadGenError, SshError) as exc:
                failed = failed or exc
        if failed is not None:  # the ones that did start stop now: no generator loads alone
            for started in starts:
                started.proc.stop()
            raise LoadGenError(str(failed)) from None
        runs = list(pool.map(lambda pair: pair[0].collect(pair[1]), zip(generators, starts)))
    histograms = [r.histogram for r in runs]
    if any(h is None for h in histograms):
        raise LoadGenError("a generator sent no raw latency record; its percentiles cannot be merged")
    merged = merge_results([r.result for r in runs], [h for h in histograms if h is not None])
    return MergedRun(merged, tuple(runs), start_at)


def _wrapper_lines(stdout: Path) -> tuple[float | None, float | None]:
    """The wrapper's start time (first line) and wrk's CPU seconds (its `cpu=` line)."""
    try:
        lines = stdout.read_text(errors="replace").splitlines()
    except OSError:
        return None, None
    started = cpu = None
    try:
        started = float(lines[0]) if lines else None
    except ValueError:
        pass
    for line in lines:
        if line.startswith("cpu="):
            try:
                cpu = float(line[4:])
            except ValueError:
                pass
    return started, cpu


def _tail(path: Path) -> str:
    try:
        return " ".join(path.read_text(errors="replace").strip().splitlines()[-3:])
    except OSError:
        return ""
