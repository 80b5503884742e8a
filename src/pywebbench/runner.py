"""One session end to end: environment, server start, verification, warmup, load, record.

The runner never prints; it reports progress through a callback and results through the
writer, one trial at a time, so an interrupted run keeps everything it finished.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path

from pywebbench.catalog.model import LaunchSpec, Stack
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.envs import BuiltEnv, EnvBuildError, EnvProvider, EnvSpec
from pywebbench.loadgen.base import LoadGenError, LoadGenerator, LoadRequest, taskset_prefix
from pywebbench.plan import Plan, Session
from pywebbench.procs import ManagedProcess, free_port
from pywebbench.results.model import StackInfo, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter
from pywebbench.verify import NotReady, keeps_alive, verify_endpoint, wait_ready
from pywebbench.workloads import Workload

HOST = "127.0.0.1"


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


def server_environment(env: BuiltEnv) -> dict[str, str]:
    """An explicit environment: nothing of the harness's own leaks into the server."""
    return {
        "PATH": f"{env.bin_dir}:/usr/local/bin:/usr/bin:/bin",
        "VIRTUAL_ENV": str(env.path),
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
    )


class Runner:
    def __init__(
        self,
        *,
        run_dir: Path,
        writer: ResultsWriter,
        generator: LoadGenerator,
        builder: EnvProvider,
        python: str,
        ready_timeout_s: float = 60.0,
        request_timeout_s: float = 5.0,
        keepalive: bool = True,
        on_progress: Callable[[Progress], None] = lambda p: None,
    ) -> None:
        self.run_dir = run_dir
        self.writer = writer
        self.generator = generator
        self.builder = builder
        self.python = python
        self.ready_timeout_s = ready_timeout_s
        self.request_timeout_s = request_timeout_s
        self.keepalive = keepalive
        self.on_progress = on_progress
        self.ledger = TimeLedger()
        self.results: list[TrialResult] = []
        self._recorded_envs: set[str] = set()
        self._done = 0
        self._total = 0
        self._measure_started = 0.0

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

    def run_session(self, session: Session) -> None:
        stack = session.stack
        per_trial = session.trials[0].warmup_s + session.trials[0].duration_s if session.trials else 0.0
        self._progress(f"{stack.id} (environment)", per_trial)
        blank = stack_info(stack, session, "", ())
        started = time.monotonic()
        try:
            env = self.builder.ensure(EnvSpec(stack.requirements, stack.overrides, self.python))
        except EnvBuildError as exc:
            self._fail_all(session, blank, TrialStatus.UNAVAILABLE, f"environment build failed: {exc}")
            return
        finally:
            self.ledger.add("environments", time.monotonic() - started)
        if env.record.hash not in self._recorded_envs:
            self.writer.add_environment(env.record)
            self._recorded_envs.add(env.record.hash)

        port = free_port(HOST)
        launch = LaunchSpec(str(env.python), stack.framework.module, HOST, port, session.workers, session.threads)
        cpus = session.trials[0].stack_cpus if session.trials else ()
        argv = [*taskset_prefix(cpus), *stack.server.build_argv(launch)]
        info = stack_info(stack, session, env.record.hash, tuple(argv))
        label = f"r{session.round}-{stack.id.replace(':', '_')}"
        server = ManagedProcess(argv, env=server_environment(env), log_dir=self.run_dir / "logs", name=label)
        self._progress(f"{stack.id} (starting)", per_trial)
        started = time.monotonic()
        with server:
            try:
                wait_ready(
                    HOST, port, session.workloads[0].path,
                    timeout_s=self.ready_timeout_s, alive=lambda: server.poll() is None,
                )
            except NotReady as exc:
                tail = server.stderr_tail(15) or server.stdout_path.read_text(errors="replace")[-1500:]
                self._fail_all(session, info, TrialStatus.SERVER_FAILED, f"{exc}\n{tail}".strip())
                return
            finally:
                self.ledger.add("server starts", time.monotonic() - started)
            problems = {w.name: verify_endpoint(HOST, port, w) for w in session.workloads}
            keepalive = keeps_alive(HOST, port, session.workloads[0].path)
            for spec, workload in zip(session.trials, session.workloads, strict=True):
                self._progress(f"{stack.id} {workload.name}", per_trial)
                problem = problems[workload.name]
                if problem is not None:
                    self._record(TrialResult(spec, info, TrialStatus.INVALID_RESPONSE, now(), now(),
                                             keepalive=keepalive, error=problem))
                    continue
                self._record(self._measure(spec, workload, info, server, port, keepalive))
        self._progress(f"{stack.id} done", per_trial)

    def _measure(
        self, spec: TrialSpec, workload: Workload, info: StackInfo, server: ManagedProcess, port: int,
        keepalive: bool,
    ) -> TrialResult:
        started_at = now()
        url = f"http://{HOST}:{port}{workload.path}"
        work_dir = self.run_dir / "loadgen"
        base = LoadRequest(
            url=url, connections=spec.connections, duration_s=spec.duration_s, cpus=spec.loadgen_cpus,
            requests=spec.requests, timeout_s=self.request_timeout_s, keepalive=self.keepalive,
        )
        try:
            if spec.warmup_s > 0:
                started = time.monotonic()
                warm_count = max(1, spec.requests // 5) if spec.requests else None
                warm = replace(base, duration_s=spec.warmup_s, label=f"{spec.trial_id}.warmup", requests=warm_count)
                self.generator.run(warm, work_dir)
                self.ledger.add("warmups", time.monotonic() - started)
            started = time.monotonic()
            load = self.generator.run(replace(base, label=spec.trial_id), work_dir)
            self.ledger.add("measured windows", time.monotonic() - started)
        except LoadGenError as exc:
            status = TrialStatus.SERVER_FAILED if server.poll() is not None else TrialStatus.LOADGEN_FAILED
            return TrialResult(spec, info, status, started_at, now(), keepalive=keepalive,
                               error=f"{exc}\n{server.stderr_tail(10)}".strip())
        if server.poll() is not None:
            return TrialResult(spec, info, TrialStatus.SERVER_FAILED, started_at, now(), load=load,
                               keepalive=keepalive, error=f"server exited during load\n{server.stderr_tail(10)}")
        return TrialResult(spec, info, TrialStatus.OK, started_at, now(), load=load, keepalive=keepalive)
