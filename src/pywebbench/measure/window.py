"""One measured window on a live server: discarded load before it, the load, its figures and checks.

`WindowMeasurer` is what the runner measures with (it launches; its measurer loads): the restart,
interleaved and duet methods all measure through `measure`, `prepare`, `db_peak` and
`usages_for`. A live server (`Live`) is what a launch hands over.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Protocol

from pywebbench.catalog.protocols import protocol_of
from pywebbench.catalog.schedule import Schedule
from pywebbench.catalog.workloads import HttpRequest, Needs, Workload
from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest
from pywebbench.loadgen.shaping import shaped
from pywebbench.measure.accounting import Accountant, WindowUsage, cpu_source, usage_between
from pywebbench.measure.answers import Reply
from pywebbench.measure.backlog import pending, pending_by_port
from pywebbench.measure.ceiling import NO_CEILING, CeilingReading
from pywebbench.measure.checks import IDLE_APPS, instrument_check, trial_checks
from pywebbench.measure.confinement import ServerWatch, named_oom, sigkilled
from pywebbench.measure.launchers import HOST, RunningServer, process_tree, server_gone
from pywebbench.measure.procsampler import OTHER
from pywebbench.measure.quiesce import wait_until_drained
from pywebbench.measure.roles import PeakReading, Placement
from pywebbench.plan.sessions import Session
from pywebbench.results.model import ResourceUsage, StackInfo, TrialResult, TrialSpec, TrialStatus
from pywebbench.services.backing import Backing
from pywebbench.services.watchdog import Watchdog


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass
class TimeLedger:
    """Where the wall time of a run went, so the harness's own overhead is visible."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


def phases_of(ledger: dict[str, float], wall_s: float) -> dict[str, float]:
    """A run's ledger with the unaccounted rest of its wall time as the harness's own."""
    return {**ledger, "other (harness)": max(0.0, wall_s - sum(ledger.values()))}


class LaunchFailed(Exception):
    """A server could not be started or answered nothing: every trial of it gets `status`."""

    def __init__(self, status: TrialStatus, error: str, info: StackInfo) -> None:
        super().__init__(error)
        self.status = status
        self.error = error
        self.info = info


@dataclass(frozen=True)
class Live:
    """A launched server, verified and enrolled, ready for windows."""

    session: Session
    info: StackInfo
    server: RunningServer
    port: int
    """Where the load goes: the server, or its nginx proxy."""
    keepalive: bool | None
    problems: Mapping[str, str | None]
    """Per workload: why its answer was wrong (None: exact)."""
    overlap: Mapping[str, str | None]
    """Per workload: the no-overlap finding of an async-claiming stack, if any."""
    role: str
    """The accountant's role of its app processes."""
    proxy_role: str | None
    launch: int
    lane: int | None = None
    """Its own pgbouncer database entry when several servers are live at once."""
    launch_checks: tuple[str, ...] = ()
    """Checks found at launch that hold for every window of it (a failed keep-alive probe)."""
    answers: Mapping[str, Reply] = field(default_factory=dict)
    """A traffic mix's right answers by request, compared across the live servers (answers.odd_answers)."""
    host: str = HOST
    """Where the load goes with `port`: loopback, the app host, or the link proxy in front of it."""


SETTLE_DRAIN_TIMEOUT_S = 30.0
"""The longest wait after a window's settle (or a launch's warmup) for its own server to serve
what the settle's connections left queued."""
SETTLE_DRAIN_STALL_S = 1.0
"""A queue that has not shrunk for this long is held, not being served: the window starts."""


def local_ports(lives: Iterable[Live]) -> tuple[int, ...]:
    """The ports whose connections this host's socket table shows: the servers' and their proxies'
    (a server on another host is in its host's table, not ours)."""
    return tuple(dict.fromkeys(p for live in lives if live.server.group_usage is None
                               for p in (live.port, live.server.port)))


def load_failed(live: Live, exc: LoadGenError) -> tuple[TrialStatus, str]:
    """Why a window has no load: the generator failed, or the server it loaded died under it."""
    server = live.server
    if server.alive():
        status, cause = TrialStatus.LOADGEN_FAILED, f"the load generator failed: {exc}"
    else:
        status, cause = TrialStatus.SERVER_FAILED, f"{server_gone(live.session.label, server)} during the window"
    return status, f"{cause}\n{server.log_tail()}".strip()


def died_during(live: Live) -> str | None:
    """The server ended while its window ran (its log's tail after the cause), else None."""
    if live.server.alive():
        return None
    return f"{server_gone(live.session.label, live.server)} during the window\n{live.server.log_tail()}"


class WindowContext(Protocol):
    """What a window needs of the runner that launched its server."""

    run_dir: Path
    generator: LoadGenerator
    backing: Backing | None
    request_timeout_s: float
    keepalive: bool
    ceiling: Callable[[TrialSpec], CeilingReading]
    sample_resources: bool
    accountant: Accountant
    settle: Callable[[LoadRequest, float, Path], None]
    watchdog: Watchdog
    on_note: Callable[[str], None]
    ledger: TimeLedger
    placement: Placement
    holding: set[str]
    """Stacks (by label) whose server holds connections it never serves (bjoern leaves the last
    request of a closed client unread): after one stall no drain waits for their queues again."""

    def record(self, result: TrialResult) -> None: ...

    def heal(self) -> None: ...

    def progress(self, label: str, pending: float) -> None: ...


class WindowMeasurer:
    """Measuring on live servers, for the runner that launched them (the runner holds one)."""

    def __init__(self, runner: WindowContext) -> None:
        self.runner = runner

    # -- measuring -----------------------------------------------------------------------------

    def measure(self, live: Live, spec: TrialSpec, workload: Workload, *, warmup_s: float = 0.0,
                settle_s: float = 0.0) -> TrialResult:
        """One window on a live server (after a warmup or a settle), checked and recorded."""
        spec = replace(spec, launch=live.launch)
        self.runner.progress(f"{live.session.label} {workload.name}", spec.duration_s + warmup_s + settle_s)
        problem = live.problems.get(workload.name)
        if problem is not None:
            result = TrialResult(spec, live.info, TrialStatus.INVALID_RESPONSE, now(), now(),
                                 keepalive=live.keepalive, error=problem)
            self.runner.record(result)
            return result
        if not live.server.alive():  # died in an earlier window: nothing to load, and no wait for it
            result = TrialResult(spec, live.info, TrialStatus.SERVER_FAILED, now(), now(), keepalive=live.keepalive,
                                 error=f"{server_gone(live.session.label, live.server)} before this window")
            self.runner.record(result)
            self.runner.on_note(f"{spec.trial_id}: {result.status.value}: {result.error}")
            return result
        found = live.overlap.get(workload.name)
        self.runner.heal()
        mark = self.runner.watchdog.mark()
        self.runner.watchdog.during = f"{live.session.label} {workload.name}"
        result = self._window(live, spec, workload, warmup_s=warmup_s, settle_s=settle_s)
        result = self.mark_faults(result, mark)
        self.runner.watchdog.during = f"the pause after {live.session.label} {workload.name}"
        ceiling = self.runner.ceiling(spec) if result.load is not None else NO_CEILING  # timed on its own line
        validity = trial_checks(result, ceiling.rps) + instrument_check("generator ceiling", ceiling.problem)
        result = replace(result, checks=result.checks + ((found,) if found else ()) + live.launch_checks + validity)
        self.runner.record(result)
        if result.status is not TrialStatus.OK and result.error:
            self.runner.on_note(f"{spec.trial_id}: {result.status.value}: {result.error.splitlines()[0]}")
        self.runner.heal()
        return result

    def mark_faults(self, result: TrialResult, mark: int) -> TrialResult:
        """A backing service or proxy that died since `mark` spoiled the window: say which."""
        deaths = self.runner.watchdog.deaths_since(mark)
        if not deaths:
            return result
        cause = "; ".join(d.line for d in deaths)
        return replace(result, status=TrialStatus.SERVICE_FAILED,
                       error=f"{cause}\n{result.error}" if result.error else cause)

    def load_request(self, spec: TrialSpec, port: int, path: str,
                     mix: tuple[HttpRequest, ...] = (), host: str = HOST,
                     schedule: Schedule | None = None, server_pids: tuple[int, ...] = ()) -> LoadRequest:
        """The window's load; a recorded schedule plays the stretch of its round (every stack of a
        round the same stretch, so the windows stay paired); a connection shape's as it has it
        (`server_pids`: the server whose memory its driver reads)."""
        start = (schedule.start_for_round(spec.round, spec.duration_s, spec.rate)
                 if schedule is not None and spec.rate is not None else 0.0)
        protocol = protocol_of(spec.protocol)
        return shaped(LoadRequest(
            url=f"{protocol.scheme}://{host}:{port}{path}", connections=spec.connections, duration_s=spec.duration_s,
            cpus=spec.loadgen_cpus, requests=spec.requests, timeout_s=self.runner.request_timeout_s,
            keepalive=self.runner.keepalive, rate=spec.rate, label=spec.trial_id, mix=mix,
            schedule=schedule, schedule_from_s=start, protocol=protocol,
        ), spec.workload, server_pids)

    def prepare(self, live: Live, spec: TrialSpec, workload: Workload, *, warmup_s: float, settle_s: float) -> None:
        """Discarded load before a window: a warmup after a start, or a short settle between windows."""
        base = self.load_request(spec, live.port, workload.path, workload.requests, host=live.host,
                                 schedule=workload.schedule)
        work_dir = self.runner.run_dir / "loadgen"
        if warmup_s > 0:
            started = time.monotonic()
            if spec.requests:
                # A fixed-count reproduction (ab -n) warms with a fifth of its count, as before.
                self.runner.generator.run(replace(base, duration_s=warmup_s, label=f"{spec.trial_id}.warmup",
                                           requests=max(1, spec.requests // 5)), work_dir)
            else:
                # Timed like a settle: the generators round to whole seconds, so a 0.5 s warmup
                # would cost a full second per server and launch; its figures are never read.
                self.runner.settle(base, warmup_s, work_dir)
            self.runner.ledger.add("warmups", time.monotonic() - started)
        if settle_s > 0:
            started = time.monotonic()
            self.runner.settle(base, settle_s, work_dir)
            self.runner.ledger.add("settles", time.monotonic() - started)
        if warmup_s > 0 or settle_s > 0:
            self.drain_settled((live,))

    def drain_settled(self, lives: Iterable[Live]) -> None:
        """Wait until the servers have served what the discarded load left queued.

        A closed-loop settle ends with one request per connection still queued at the server,
        which serves them all after the generator has gone. A window started at once counts none
        of that work and waits behind it: at 200 connections a `cpu` server (about 45 req/s on
        this machine's core) spends the window's first 4.4 s on the settle's requests, so every
        such window read low by connections / duration req/s, and a 4 s duet window read 0.
        """
        holding = self.runner.holding
        label_of = {port: live.session.label for live in lives if live.session.label not in holding
                    for port in local_ports((live,))}
        if not label_of:
            return
        drained = wait_until_drained(lambda: pending(label_of), timeout_s=SETTLE_DRAIN_TIMEOUT_S,
                                     stall_s=SETTLE_DRAIN_STALL_S)
        self.runner.ledger.add("drains after settles", drained.waited_s)
        if not drained.drained:
            holding.update(label_of[port] for port in pending_by_port(label_of))

    def db_peak(self, sampling: ExitStack, live: Live, workload: Workload) -> PeakReading | None:
        """Seed 000's #DB: the peak of the loaded lane's server sessions while `sampling` is open."""
        backing = self.runner.backing
        if backing is None or backing.pgbouncer is None or Needs.DATABASE not in workload.needs:
            return None
        if live.info.db == "sqlite":  # /posts read a file: no session to count (None, not 0)
            return None
        sampler = self.runner.placement.db_peak(live.lane)  # read where pgbouncer runs, here or on the db host
        return sampling.enter_context(sampler) if sampler is not None else None

    def _window(self, live: Live, spec: TrialSpec, workload: Workload, *, warmup_s: float,
                settle_s: float) -> TrialResult:
        started_at = now()
        server = live.server
        before = process_tree(server.pids)
        watch = ServerWatch(self.runner.accountant, live.role, local=bool(server.pids))  # its limits' counters
        try:
            self.prepare(live, spec, workload, warmup_s=warmup_s, settle_s=settle_s)
            load_average = os.getloadavg()
            placed_before = self.runner.placement.usage(server)
            started = time.monotonic()
            with ExitStack() as sampling:
                peak = self.db_peak(sampling, live, workload)
                usage = sampling.enter_context(self.runner.accountant.window(peak_of=(live.role,))) \
                    if self.runner.sample_resources else None
                watch.open()
                load = self.runner.generator.run(self.load_request(spec, live.port, workload.path, workload.requests,
                                                            host=live.host, schedule=workload.schedule,
                                                            server_pids=server.pids),
                                                 self.runner.run_dir / "loadgen")
                watch.close()
                window_s = time.monotonic() - started
            placed_after = self.runner.placement.usage(server)
            self.runner.ledger.add("measured windows", time.monotonic() - started)
        except LoadGenError as exc:
            cgroup = watch.reading(None, killed=not server.alive())
            status, failure = named_oom(*load_failed(live, exc), cgroup, live.session.label, spec)
            return TrialResult(spec, live.info, status, started_at, now(), keepalive=live.keepalive, error=failure,
                               server_cgroup=cgroup)
        status, error = TrialStatus.OK, None
        lost = sorted(before - process_tree(server.pids))
        if (died := died_during(live)) is not None:
            status, error = TrialStatus.SERVER_FAILED, died
        elif lost:
            # A worker died and its master (gunicorn, uWSGI) started another: the server is up,
            # but the window's figures include the loss.
            status = TrialStatus.SERVER_FAILED
            error = (f"{len(lost)} process(es) of {live.session.label}'s server (pid {', '.join(map(str, lost))}) "
                     f"exited during the window; the server itself is still up\n{server.log_tail()}")
        app = usage.usages.get(live.role) if usage is not None else None
        cgroup = watch.reading(app.peak_rss_mb if app is not None else None,
                               killed=sigkilled(server.returncode()) or bool(lost))
        status, error = named_oom(status, error, cgroup, live.session.label, spec)
        return TrialResult(
            spec, live.info, status, started_at, now(), load=load, keepalive=live.keepalive, error=error,
            db_sessions=peak.peak if peak is not None else None,
            checks=instrument_check("#DB sampler", peak.error if peak is not None else None),
            resources=(self.usages_for(live, usage) if usage is not None else ())
            + usage_between(placed_before, placed_after, window_s),
            sampler_cpu_s=usage.sampler_cpu_s if usage is not None else None,
            load_average=load_average,
            cpu_source=cpu_source(placed_after, self.runner.accountant.source),
            steal_s=usage.steal_s if usage is not None else None, server_cgroup=cgroup,
        )

    def usages_for(self, live: Live, usage: WindowUsage, partner: Live | None = None) -> tuple[ResourceUsage, ...]:
        """The window's roles as a trial reports them: its own app as "app" (and its proxy as
        "nginx"), a duet partner's as "partner", every other live server summed as idle-apps."""
        out: list[ResourceUsage] = []
        idle: list[ResourceUsage] = []
        for role, u in usage.usages.items():
            if role == live.role and not live.server.pids:
                continue  # a server on another host: its CPU is not read here (blank, not zero)
            if role == live.role:
                out.append(replace(u, role="app"))
            elif live.proxy_role is not None and role == live.proxy_role:
                out.append(replace(u, role="nginx"))
            elif partner is not None and role in (partner.role, partner.proxy_role):
                out.append(replace(u, role="partner" if role == partner.role else "partner-nginx"))
            elif role.startswith("app-") or role.startswith("nginx-app-"):
                idle.append(u)
            else:
                out.append(u)
        if idle:
            out.append(ResourceUsage(IDLE_APPS, sum(u.cpu_s for u in idle), sum(u.peak_rss_mb for u in idle),
                                     sum(u.processes for u in idle), usage.window_s))
        other = [u for u in out if u.role == OTHER]
        return tuple(u for u in out if u.role != OTHER) + tuple(other)
