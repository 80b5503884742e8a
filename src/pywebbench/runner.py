"""One session end to end: environment, server start, verification, warmup, load, record.

The runner never prints; it reports progress through a callback and results through the
writer, one trial at a time, so an interrupted run keeps everything it finished.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from pywebbench.catalog.model import ConcurrencyType, LaunchSpec, Stack
from pywebbench.checks import trial_checks
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.envs import EnvBuildError, EnvProvider, EnvSpec
from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest, taskset_prefix
from pywebbench.plan import Plan, Session
from pywebbench.procs import ManagedProcess, free_port
from pywebbench.resources import OTHER, ProcessTable, ResourceSampler, generator_roots
from pywebbench.results.model import ResourceUsage, StackInfo, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter
from pywebbench.services.backing import Backing, PeakSampler
from pywebbench.services.nginx import NginxService
from pywebbench.verify import NotReady, fetch, keeps_alive, verify_endpoint, wait_ready
from pywebbench.workloads import Expected, Needs, Workload

HOST = "127.0.0.1"
OVERLAP_REQUESTS = 10


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    current: str
    eta_s: float | None


@dataclass
class TimeLedger:
    """Where the wall time of a run went, so the harness's own overhead is visible."""

    seconds: dict[str, float] = field(default_factory=dict)

    def add(self, phase: str, seconds: float) -> None:
        self.seconds[phase] = self.seconds.get(phase, 0.0) + seconds


@dataclass(frozen=True)
class RunningServer:
    """What the runner needs of a started server, whatever started it."""

    port: int
    argv: tuple[str, ...]
    alive: Callable[[], bool]
    log_tail: Callable[[], str]
    pids: tuple[int, ...] = ()
    """Root processes of the server, whose trees the resource sampler follows."""


def base_environment(extra_path: str = "") -> dict[str, str]:
    """An explicit environment: nothing of the harness's own leaks into the server."""
    return {
        "PATH": f"{extra_path + ':' if extra_path else ''}/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(APPS_DIR),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }


def stack_info(stack: Stack, session: Session, env_hash: str, argv: tuple[str, ...]) -> StackInfo:
    return StackInfo(
        id=stack.id,
        framework=stack.framework.name,
        framework_title=stack.framework.title,
        server=stack.server.server,
        server_title=stack.server.title,
        variant=stack.server.variant,
        worker_class=stack.server.worker_class,
        interface=stack.server.interface.value,
        concurrency=stack.concurrency.value,
        event_loop=stack.server.event_loop,
        http_parser=stack.server.http_parser,
        workers=session.workers,
        threads=session.threads,
        env_hash=env_hash,
        argv=argv,
        driver=stack.driver,
    )


def with_harness(usages: tuple[ResourceUsage, ...], harness_cpu_s: float) -> tuple[ResourceUsage, ...]:
    """Move this process's own CPU (its threads: sampler, #DB poller, waiting) out of "other".

    "other" is the machine's busy time minus every role; without this the harness would
    count as a neighbour and trip the busy-machine check by itself.
    """
    other = next((u for u in usages if u.role == OTHER), None)
    if other is None:
        return usages
    harness = ResourceUsage("harness", harness_cpu_s, 0.0, 1, other.window_s)
    rest = replace(other, cpu_s=max(0.0, other.cpu_s - harness_cpu_s))
    return tuple(u for u in usages if u.role != OTHER) + (harness, rest)


def overlap_problem(port: int, path: str, delay_s: float, requests: int | None = None) -> str | None:
    """N concurrent requests that each wait `delay_s` must finish in well under N x delay_s.

    Seed 000's central bug: a greenlet server with an unpatched driver serialises every
    query while claiming to be async. Run only on stacks that claim to overlap. N is chosen
    so that one-after-another would take about a second: with short delays, a handful of
    requests would be dominated by fixed per-request costs and prove nothing.
    """
    if requests is None:
        requests = min(100, max(OVERLAP_REQUESTS, math.ceil(1.0 / delay_s)))
    def one(_: int) -> int:
        return fetch(HOST, port, path, timeout_s=requests * delay_s + 30).status

    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=requests) as pool:
        statuses = list(pool.map(one, range(requests)))
    elapsed = time.monotonic() - started
    sequential = requests * delay_s
    if any(s != 200 for s in statuses):
        return f"no-overlap: {requests} concurrent {path} answered {sorted(set(statuses))}"
    # 0.75: serialised requests take at least the sequential time; overlapping ones took
    # 0.05-0.5 of it here, up to 0.51 on a machine busy with other work.
    if elapsed > 0.75 * sequential:
        return (f"no-overlap: {requests} concurrent {path} took {elapsed:.2f}s; one after another would take "
                f"{sequential:.2f}s, so requests did not overlap (a blocking driver or client?)")
    return None


class Runner:
    def __init__(
        self,
        *,
        run_dir: Path,
        writer: ResultsWriter,
        generator: LoadGenerator,
        builder: EnvProvider,
        python: str,
        backing: Backing | None = None,
        topology: str = "direct",
        ready_timeout_s: float = 60.0,
        request_timeout_s: float = 5.0,
        keepalive: bool = True,
        on_progress: Callable[[Progress], None] = lambda p: None,
        ceiling: Callable[[TrialSpec], float | None] = lambda spec: None,
        sample_resources: bool = True,
    ) -> None:
        self.run_dir = run_dir
        self.writer = writer
        self.generator = generator
        self.builder = builder
        self.python = python
        self.backing = backing
        self.topology = topology
        self.ready_timeout_s = ready_timeout_s
        self.request_timeout_s = request_timeout_s
        self.keepalive = keepalive
        self.on_progress = on_progress
        self.ceiling = ceiling
        self.sample_resources = sample_resources
        self.ledger = TimeLedger()
        self._proxy_pids: tuple[int, ...] = ()
        self.results: list[TrialResult] = []
        self._recorded_envs: set[str] = set()
        self._done = 0
        self._total = 0
        self._measure_started = 0.0

    @property
    def expected(self) -> Expected:
        return self.backing.expected if self.backing is not None else Expected()

    def run(self, plan: Plan) -> list[TrialResult]:
        self._total = len(plan.trials)
        self._measure_started = time.monotonic()
        for session in plan.sessions:
            self.run_session(session)
        return self.results

    def _record(self, result: TrialResult) -> None:
        self.writer.add_trial(result)
        self.results.append(result)
        self._done += 1

    def _progress(self, label: str, pending: float) -> None:
        elapsed = time.monotonic() - self._measure_started
        eta = None
        if self._done:
            eta = elapsed / self._done * (self._total - self._done)
        elif pending:
            eta = pending * self._total
        self.on_progress(Progress(self._done, self._total, label, eta))

    def _fail_all(self, session: Session, info: StackInfo, status: TrialStatus, error: str) -> None:
        for spec in session.trials:
            self._record(TrialResult(spec, info, status, now(), now(), error=error))

    @contextmanager
    def _start_server(self, session: Session, label: str, env_path: Path | None) -> Iterator[RunningServer]:
        """Start the stack's server (a Python env, a native binary, or nginx) and yield it."""
        stack = session.stack
        logs = self.run_dir / "logs"
        app_env = self.backing.app_environment(stack, session.trials[0]) if self.backing is not None \
            else dict(session.app_env)
        cpus = session.trials[0].stack_cpus if session.trials else ()
        with ExitStack() as stack_of_servers:
            if stack.server.native == "nginx":
                nginx = stack_of_servers.enter_context(
                    NginxService(logs / f"{label}.nginx", workers=session.workers))
                yield RunningServer(nginx.info.port, ("nginx", "-c", "nginx.conf"), lambda: True, lambda: "",
                                    nginx.root_pids())
                return
            port = free_port(HOST)
            if stack.server.native == "go-reference":
                if self.backing is None or self.backing.go is None:
                    raise NotReady("the Go reference was not built")
                program, path = str(self.backing.go.reference), ""
            else:
                assert env_path is not None
                program, path = str(env_path / "bin" / "python"), str(env_path / "bin")
            launch = LaunchSpec(program, stack.framework.module, HOST, port, session.workers, session.threads)
            argv = [*taskset_prefix(cpus), *stack.server.build_argv(launch)]
            env = {**base_environment(path), **app_env}
            if env_path is not None:
                env["VIRTUAL_ENV"] = str(env_path)
            proc = stack_of_servers.enter_context(ManagedProcess(argv, env=env, log_dir=logs, name=label))

            def tail() -> str:
                return proc.stderr_tail(15) or proc.stdout_path.read_text(errors="replace")[-1500:]

            yield RunningServer(port, tuple(argv), lambda: proc.poll() is None, tail, (proc.pid,))

    def run_session(self, session: Session) -> None:
        stack = session.stack
        per_trial = session.trials[0].warmup_s + session.trials[0].duration_s if session.trials else 0.0
        self._progress(f"{stack.id} (environment)", per_trial)
        env_path: Path | None = None
        env_hash = ""
        if stack.server.native is None:
            started = time.monotonic()
            try:
                env = self.builder.ensure(EnvSpec(stack.requirements, stack.overrides, self.python))
            except EnvBuildError as exc:
                self._fail_all(session, stack_info(stack, session, "", ()), TrialStatus.UNAVAILABLE,
                               f"environment build failed: {exc}")
                return
            finally:
                self.ledger.add("environments", time.monotonic() - started)
            env_path, env_hash = env.path, env.record.hash
            if env_hash not in self._recorded_envs:
                self.writer.add_environment(env.record)
                self._recorded_envs.add(env_hash)

        label = f"r{session.round}-{session.label.replace(':', '_').replace('#', '_')}"
        self._retune(session)
        self._progress(f"{stack.id} (starting)", per_trial)
        started = time.monotonic()
        try:
            with ExitStack() as running:
                server: RunningServer | None = None
                try:
                    server = running.enter_context(self._start_server(session, label, env_path))
                    info = stack_info(stack, session, env_hash, server.argv)
                    wait_ready(HOST, server.port, session.workloads[0].path,
                               timeout_s=self.ready_timeout_s, alive=server.alive)
                    port = server.port
                    self._proxy_pids = ()
                    if self.topology == "nginx" and stack.server.native != "nginx":
                        proxy = running.enter_context(
                            NginxService(self.run_dir / "logs" / f"{label}.proxy", upstream_port=server.port))
                        port = proxy.info.port  # seed 000: the generator talks to nginx, nginx to the app
                        self._proxy_pids = proxy.root_pids()
                except (NotReady, OSError, RuntimeError) as exc:
                    tail, argv = (server.log_tail(), server.argv) if server is not None else ("", ())
                    self._fail_all(session, stack_info(stack, session, env_hash, argv), TrialStatus.SERVER_FAILED,
                                   f"{exc}\n{tail}".strip())
                    return
                finally:
                    self.ledger.add("server starts", time.monotonic() - started)
                self._measure_session(session, info, server, port)
        finally:
            if self.backing is not None:
                self.backing.reset_between_sessions()
        self._progress(f"{stack.id} done", per_trial)

    def _retune(self, session: Session) -> None:
        """Give pgbouncer and the upstream this sweep point's knobs before the server starts."""
        if self.backing is None:
            return
        caps = {t.max_db_sessions for t in session.trials if t.max_db_sessions is not None}
        delays = {t.upstream_delay_s for t in session.trials if t.upstream_delay_s is not None}
        started = time.monotonic()
        for record in self.backing.retune(max(caps) if caps else None, max(delays) if delays else None):
            self.writer.add_service(record)
        self.ledger.add("service starts", time.monotonic() - started)

    def _roles(self, server: RunningServer, table: ProcessTable) -> Callable[[], dict[str, tuple[int, ...]]]:
        """Root PIDs per role for the resource sampler; the generator's appear once it starts."""
        services: dict[str, tuple[int, ...]] = {"app": server.pids}
        if self._proxy_pids:
            services["nginx"] = self._proxy_pids
        backing = self.backing
        if backing is not None:
            for role, service in (("postgres", backing.postgres), ("pgbouncer", backing.pgbouncer),
                                  ("upstream", backing.upstream)):
                if service is not None:
                    services[role] = service.root_pids()
        known = {pid for pids in services.values() for pid in pids}

        def roles() -> dict[str, tuple[int, ...]]:
            return {**services, "loadgen": tuple(generator_roots(known, table))}
        return roles

    def _measure_session(self, session: Session, info: StackInfo, server: RunningServer, port: int) -> None:
        stack = session.stack
        base_expected = self.expected
        expected = {t.workload: replace(base_expected, cpu_size=t.cpu_size or base_expected.cpu_size)
                    for t in session.trials}
        problems = {w.name: verify_endpoint(HOST, port, w, expected[w.name]) for w in session.workloads}
        keepalive = keeps_alive(HOST, port, session.workloads[0].path)
        per_trial = session.trials[0].warmup_s + session.trials[0].duration_s
        claims_async = stack.concurrency in (ConcurrencyType.GREENLET, ConcurrencyType.COROUTINE)
        for spec, workload in zip(session.trials, session.workloads, strict=True):
            self._progress(f"{stack.id} {workload.name}", per_trial)
            problem = problems[workload.name]
            if problem is not None:
                self._record(TrialResult(spec, info, TrialStatus.INVALID_RESPONSE, now(), now(),
                                         keepalive=keepalive, error=problem))
                continue
            checks: list[str] = []
            delay = {"db": spec.db_delay_s, "upstream": spec.upstream_delay_s}.get(workload.name)
            if claims_async and delay:
                started = time.monotonic()
                found = overlap_problem(port, workload.path, delay)
                self.ledger.add("checks", time.monotonic() - started)
                if found:
                    checks.append(found)
            result = self._measure(spec, workload, info, server, port, keepalive)
            ceiling = self.ceiling(spec) if result.load is not None else None  # timed on its own line
            validity = trial_checks(result, ceiling)
            self._record(replace(result, checks=result.checks + tuple(checks) + validity))

    def _measure(
        self, spec: TrialSpec, workload: Workload, info: StackInfo, server: RunningServer, port: int,
        keepalive: bool,
    ) -> TrialResult:
        started_at = now()
        url = f"http://{HOST}:{port}{workload.path}"
        work_dir = self.run_dir / "loadgen"
        base = LoadRequest(
            url=url, connections=spec.connections, duration_s=spec.duration_s, cpus=spec.loadgen_cpus,
            requests=spec.requests, timeout_s=self.request_timeout_s, keepalive=self.keepalive, rate=spec.rate,
        )
        load_average = os.getloadavg()
        sessions: int | None = None
        try:
            if spec.warmup_s > 0:
                started = time.monotonic()
                warm_count = max(1, spec.requests // 5) if spec.requests else None
                warm = replace(base, duration_s=spec.warmup_s, label=f"{spec.trial_id}.warmup", requests=warm_count)
                self.generator.run(warm, work_dir)
                self.ledger.add("warmups", time.monotonic() - started)
            started = time.monotonic()
            harness_cpu = time.process_time()
            with ExitStack() as sampling:
                table = ProcessTable()
                sampler = sampling.enter_context(ResourceSampler(self._roles(server, table), table=table)) \
                    if self.sample_resources else None
                peak = None
                if self.backing is not None and self.backing.pgbouncer is not None \
                        and Needs.DATABASE in workload.needs:
                    peak = sampling.enter_context(PeakSampler(self.backing.db_sessions))
                load = self.generator.run(replace(base, label=spec.trial_id), work_dir)
            sessions = peak.peak if peak is not None else None
            usages = with_harness(sampler.usages, time.process_time() - harness_cpu) if sampler is not None else ()
            sampler_cpu = sampler.sampler_cpu_s if sampler is not None else None
            self.ledger.add("measured windows", time.monotonic() - started)
        except LoadGenError as exc:
            status = TrialStatus.LOADGEN_FAILED if server.alive() else TrialStatus.SERVER_FAILED
            return TrialResult(spec, info, status, started_at, now(), keepalive=keepalive,
                               error=f"{exc}\n{server.log_tail()}".strip())
        measured = {"resources": usages, "sampler_cpu_s": sampler_cpu, "load_average": load_average,
                    "db_sessions": sessions}
        if not server.alive():
            return TrialResult(spec, info, TrialStatus.SERVER_FAILED, started_at, now(), load=load,
                               keepalive=keepalive, error=f"server exited during load\n{server.log_tail()}",
                               **measured)  # type: ignore[arg-type]
        return TrialResult(spec, info, TrialStatus.OK, started_at, now(), load=load, keepalive=keepalive,
                           **measured)  # type: ignore[arg-type]


