"""Launching a stack's server and measuring windows on it, whatever the method.

`Runner.launch` builds the environment, starts the server (through the launcher for its kind,
`measure/launchers.py`), waits for it, checks every answer and the overlap, and enrolls its
processes with the accountant; its `windows.measure` (measure/window.py) runs one window (with a warmup or a settle
before it) and records the trial. The restart method (`Runner.run`) is a launch per trial
set; the interleaved and duet methods (`pywebbench.measure`) keep launches alive across
many windows. The runner never prints; it reports progress through a callback and results
through the writer, one trial at a time, so an interrupted run keeps everything it finished.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from pywebbench.catalog.model import ConcurrencyType
from pywebbench.catalog.protocols import protocol_of
from pywebbench.catalog.workloads import Expected
from pywebbench.measure.accounting import Accountant, ProcAccountant
from pywebbench.measure.cgroups import CgroupError
from pywebbench.measure.checks import instrument_check
from pywebbench.measure.confinement import Confinement
from pywebbench.measure.launchers import RunningServer, app_role, stack_info
from pywebbench.measure.overlap import allowed_in_flight, overlap_problem
from pywebbench.measure.sizing import sizing
from pywebbench.measure.roles import Front, LoadTools, LocalPlacement, Placement
from pywebbench.measure.answers import Reply
from pywebbench.measure.verify import NotReady, keeps_alive, verify_endpoint, wait_ready
from pywebbench.measure.window import LaunchFailed, Live, TimeLedger, WindowMeasurer, now
from pywebbench.plan.protocol_plan import app_protocol
from pywebbench.plan.sessions import Plan, Session
from pywebbench.results.model import StackInfo, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.server import AUTO_WORKERS
from pywebbench.results.store import ResultsWriter
from pywebbench.services.backing import Backing
from pywebbench.services.watchdog import Watchdog
from pywebbench.measure.runtime_probe import RUNTIME_ENV, poke, read_runtime
from pywebbench.measure.stack_env import EnvUnavailable, StackEnvironments, unimportable
from pywebbench.stage.envs import EnvProvider


def _tls(session: Session) -> bool:
    """The session's front terminates TLS (h1-tls, h2-tls): the checks ask it over TLS too."""
    return protocol_of(session.trials[0].protocol).tls


def _app_tls(session: Session) -> bool:
    """The app server itself terminates TLS (not behind the nginx topology's front, which does)."""
    return app_protocol(session.stack, session.trials[0]).tls


@dataclass(frozen=True)
class LaunchLimits:
    """How long a launch and a request may take, and what a window records beside its load."""

    ready_timeout_s: float = 60.0
    request_timeout_s: float = 5.0
    keepalive: bool = True
    sample_resources: bool = True
    """Each role's CPU and memory during the window (off only where a test reads none)."""


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    current: str
    eta_s: float | None


class Runner:
    """Launches servers (the restart method runs a session per launch); its `windows` measure them."""

    def __init__(
        self,
        *,
        run_dir: Path,
        writer: ResultsWriter,
        tools: LoadTools,
        builder: EnvProvider,
        python: str,
        limits: LaunchLimits = LaunchLimits(),
        backing: Backing | None = None,
        placement: Placement | None = None,
        accountant: Accountant | None = None,
        watchdog: Watchdog | None = None,
        on_progress: Callable[[Progress], None] = lambda p: None,
        on_note: Callable[[str], None] = lambda text: None,
    ) -> None:
        self.run_dir = run_dir
        self.writer = writer
        self.generator = tools.generator
        self.settle = tools.settle
        self.ceiling = tools.ceiling
        self.builder = builder
        self.python = python
        self.environments = StackEnvironments(builder, python, on_note)
        """Each cell's environment: its interpreter and pin applied (measure/stack_env.py)."""
        self.ready_timeout_s = limits.ready_timeout_s
        self.request_timeout_s = limits.request_timeout_s
        self.keepalive = limits.keepalive
        self.sample_resources = limits.sample_resources
        self.backing = backing
        self.on_progress = on_progress
        self.accountant: Accountant = accountant if accountant is not None else ProcAccountant()
        self.watchdog = watchdog if watchdog is not None else Watchdog(on_note)
        """Names, restarts and marks deaths of the backing services and proxies (not started
        here: without its thread it still looks at every window's end)."""
        self.on_note = on_note
        self.confinement = Confinement(self.accountant, on_note)
        """Each launch's --cpu-quota and --memory-limit, on its server's role alone."""
        self.placement: Placement = placement if placement is not None else \
            LocalPlacement(backing, "direct", run_dir, self.watchdog, self.accountant)
        """Where the roles run: this machine (the default here, with no nginx in front), or what
        execute chose: nginx in front of each server (--topology nginx), or other hosts (--hosts,
        --topology netns) with their launcher, links and delays."""
        self.ledger = TimeLedger()
        self.windows = WindowMeasurer(self)
        """Loads and records each window on a server this runner launched."""
        self.holding: set[str] = set()
        """Stacks holding connections they never serve: the drains skip their queues (measure/window.py)."""
        self.results: list[TrialResult] = []
        self.live_roles: set[str] = set()
        self._recorded_envs: set[str] = set()
        self._done = 0
        self._total = 0
        self._measure_started = 0.0

    @property
    def expected(self) -> Expected:
        return self.backing.expected if self.backing is not None else Expected()

    # -- the restart method: one launch per session ------------------------------------------

    def run(self, plan: Plan) -> list[TrialResult]:
        self.expect(len(plan.trials))
        for session in plan.sessions:
            if self._wrong_everywhere_before(session.round):
                break  # a whole round's answers were wrong: each later launch's would be too
            self.run_session(session)
        return self.results

    def _wrong_everywhere_before(self, round_no: int) -> bool:
        """Has a whole round before `round_no` passed with every answer wrong (checked before load)?"""
        return bool(self.results) and round_no > min(t.spec.round for t in self.results) and all(
            t.status is TrialStatus.INVALID_RESPONSE for t in self.results)

    def run_session(self, session: Session) -> None:
        try:
            with self.launch(session, launch=session.round) as live:
                for spec, workload in zip(session.trials, session.workloads, strict=True):
                    self.windows.measure(live, spec, workload, warmup_s=spec.warmup_s)
        except LaunchFailed as failed:
            self.fail(session.trials, failed)
        finally:
            self.reset_pool()
        self.progress(f"{session.stack.id} done", 0.0)

    # -- progress ------------------------------------------------------------------------------

    def expect(self, trials: int) -> None:
        """Add planned trials to the progress total (the stopping rule adds rounds as it goes)."""
        if not self._measure_started:
            self._measure_started = time.monotonic()
        self._total += trials

    def expect_only(self, more: int) -> None:
        """The progress total from here: what is recorded and `more` (a budget's deadline, not the
        planned rounds, ends a budgeted run)."""
        self._total = self._done + more

    def record(self, result: TrialResult) -> None:
        self.writer.add_trial(result)
        self.results.append(result)
        self._done += 1

    def progress(self, label: str, pending: float) -> None:
        elapsed = time.monotonic() - self._measure_started
        eta = None
        if self._done:
            eta = elapsed / self._done * max(0, self._total - self._done)
        elif pending:
            eta = pending * self._total
        self.on_progress(Progress(self._done, self._total, label, eta))

    def fail(self, specs: tuple[TrialSpec, ...], failed: LaunchFailed) -> None:
        for spec in specs:
            self.record(TrialResult(spec, failed.info, failed.status, now(), now(), error=failed.error))

    # -- launching -----------------------------------------------------------------------------

    def _environment(self, session: Session) -> tuple[Path | None, str]:
        stack = session.stack
        if stack.server.native is not None:
            return None, ""
        started = time.monotonic()
        try:
            env = self.environments.ensure(stack, session.trials[0])
        except EnvUnavailable as exc:
            raise LaunchFailed(TrialStatus.UNAVAILABLE, str(exc), stack_info(stack, session, "", ())) from exc
        finally:
            self.ledger.add("environments", time.monotonic() - started)
        if env.record.hash not in self._recorded_envs:
            self.writer.add_environment(env.record)
            self._recorded_envs.add(env.record.hash)
        return env.path, env.record.hash

    def _retune(self, session: Session) -> None:
        """Give pgbouncer and the upstream this sweep point's knobs before the server starts."""
        started = time.monotonic()
        for record in self.placement.retune(session):  # this point's link delay, and the RTT measured
            self.writer.add_service(record)
        self.ledger.add("service starts", time.monotonic() - started)
        if self.backing is None:
            return
        caps = {t.max_db_sessions for t in session.trials if t.max_db_sessions is not None}
        delays = {t.upstream_delay_s for t in session.trials if t.upstream_delay_s is not None}
        started = time.monotonic()
        for record in self.backing.retune(max(caps) if caps else None, max(delays) if delays else None):
            self.writer.add_service(record)
        self.ledger.add("service starts", time.monotonic() - started)

    def enroll_services(self) -> None:
        """Put the backing services' processes in their roles (again after a retune restarted one)."""
        if self.backing is None:
            return
        for role, service in (("postgres", self.backing.postgres), ("pgbouncer", self.backing.pgbouncer),
                              ("upstream", self.backing.upstream)):
            if service is not None:
                self.accountant.enroll(role, service.root_pids())

    @contextmanager
    def launch(self, session: Session, *, launch: int, label: str = "", lane: int | None = None) -> Iterator[Live]:
        """Start, verify and enroll one server; raises LaunchFailed (nothing recorded) if it cannot run."""
        stack = session.stack
        label = label or f"l{launch}-{session.label.replace(':', '_').replace('#', '_')}"
        self.heal()  # a service that died since the last window is back before this server needs it
        self.watchdog.during = f"the start of {session.label}"
        self.progress(f"{stack.id} (environment)", 0.0)
        env_path, env_hash = self._environment(session)
        self._retune(session)
        self.progress(f"{stack.id} (starting)", 0.0)
        role = app_role(session.label)
        try:
            self.confinement.apply(role, session.trials[0])  # before the server starts in its role
        except (CgroupError, OSError) as exc:
            raise LaunchFailed(TrialStatus.UNAVAILABLE, f"cannot limit the server: {exc}",
                               stack_info(stack, session, env_hash, ())) from exc
        started = time.monotonic()
        with ExitStack() as running:
            server: RunningServer | None = None
            try:
                app_env = self.placement.app_environment(
                    self.backing.app_environment(session.stack, session.trials[0], lane)
                    if self.backing is not None else dict(session.app_env)) | self._runtime_env(session, label)
                launcher = self.placement.launcher(session, env_path)
                server = running.enter_context(
                    launcher.start(
                        session, label, app_env, self.run_dir / "logs",
                        self.accountant.launcher(app_role(session.label))))
                info = stack_info(stack, session, env_hash, server.argv)
                wait_ready(server.host, server.port, session.workloads[0].path,
                           timeout_s=self.ready_timeout_s, alive=server.alive, tls=_app_tls(session))
                front = running.enter_context(self.placement.front(server, session, label))
                for record in self.placement.take_pending():  # a link's RTT, measured as it opened
                    self.writer.add_service(record)
            except (NotReady, OSError, RuntimeError) as exc:
                tail, argv = (server.log_tail(), server.argv) if server is not None else ("", ())
                status, error = self.confinement.failed_start(role, f"{exc}\n{tail}".strip())  # server-oom, or not
                status, error = unimportable(session.trials[0], tail, status, error)
                raise LaunchFailed(status, error, stack_info(stack, session, env_hash, argv)) from exc
            finally:
                self.ledger.add("server starts", time.monotonic() - started)
            self.accountant.enroll(role, server.pids)
            if session.workers == AUTO_WORKERS and server.pids:  # the count the server chose on its own
                chosen = sizing(server.pids, session.stack_cpus, session.trials[0].cpu_quota)
                info = replace(info, workers=chosen.workers, sizing=chosen)
            self.enroll_services()
            self.live_roles.add(role)
            running.callback(self._retire, role, front.proxy_role)  # an nginx in front: the placement enrolled it
            live = self._verify(session, info, server, front, role, launch)
            yield replace(live, info=self._runtime(session, live.info, server, label), lane=lane)

    def _runtime_env(self, session: Session, label: str) -> dict[str, str]:
        """Where a free-threaded build's workers answer the GIL question (apps/pwb_runtime.py)."""
        if session.stack.server.native is not None or not isinstance(self.placement, LocalPlacement):
            return {}
        return {RUNTIME_ENV: str(self.run_dir / "runtime" / label)}  # made when asked (free-threaded only)

    def _runtime(self, session: Session, info: StackInfo, server: RunningServer, label: str) -> StackInfo:
        """The interpreter the workers run, and a free-threaded build's GIL, read back after the checks
        (every workload answered once: what a worker imports lazily is imported by now)."""
        if session.stack.server.native is not None or not isinstance(self.placement, LocalPlacement):
            return info
        started = time.monotonic()
        path = session.workloads[0].path
        found = read_runtime(server.pids, self.run_dir / "runtime" / label,
                             lambda: poke(server.host, server.port, path, self.request_timeout_s))
        self.ledger.add("checks", time.monotonic() - started)
        if found.gil == "on":
            self.on_note(f"{session.label}: a worker of the free-threaded {found.interpreter} re-enabled the GIL (an "
                         "extension module without free-threading support): its windows ran with the GIL")
        return replace(info, interpreter=found.interpreter, gil=found.gil)

    def heal(self) -> None:
        """Restart any backing service or proxy that died (raises ServiceLost where it cannot)."""
        if self.watchdog.heal():
            self.enroll_services()  # the new processes into their roles' accounting
            self.placement.reenroll()

    def reset_pool(self) -> None:
        """Seed 000's habit: start from an empty pool; called once no server of a launch is left."""
        self.heal()
        if self.backing is not None:
            self.backing.reset_between_sessions()
        self.placement.reset_pool()

    def _retire(self, role: str, proxy_role: str | None) -> None:
        self.live_roles.discard(role)
        self.accountant.retire(role)
        if proxy_role:
            self.accountant.retire(proxy_role)

    def _verify(self, session: Session, info: StackInfo, server: RunningServer, front: Front, role: str,
                launch: int) -> Live:
        """Every answer exact, keep-alive observed, waits overlapping where the stack claims so."""
        started = time.monotonic()
        host, port = front.host, front.port
        check = front.h1_port  # the checks speak HTTP/1.1: an h2c nginx front answers it on a second port
        base_expected = self.expected
        expected = {t.workload: replace(base_expected, cpu_size=t.cpu_size or base_expected.cpu_size)
                    for t in session.trials}
        answers: dict[str, Reply] = {}
        listens = (server.host, server.port)  # behind nginx or a link the app may see this one instead
        tls = _tls(session)
        problems = {w.name: verify_endpoint(host, check, w, expected[w.name], answers, listens, tls=tls)
                    for w in session.workloads}
        keepalive, probe_problem = keeps_alive(host, check, session.workloads[0].path, tls=tls)
        claims_async = session.stack.concurrency in (ConcurrencyType.GREENLET, ConcurrencyType.COROUTINE)
        overlap: dict[str, str | None] = {}
        for spec, workload in zip(session.trials, session.workloads, strict=True):
            delay = {"db": spec.db_delay_s, "upstream": spec.upstream_delay_s}.get(workload.name)
            found = None
            if claims_async and delay and problems[workload.name] is None:
                # /db waits for a server session: pgbouncer's cap and an app pool bound the overlap.
                # (/posts has no delay to overlap, on PostgreSQL or SQLite: it is not checked.)
                cap = partial(allowed_in_flight, max_db_sessions=spec.max_db_sessions, db_pool=spec.db_pool,
                              workers=session.workers) if workload.name == "db" else None
                found = overlap_problem(check, workload.path, delay, in_flight=cap, host=host, tls=tls)
            overlap[workload.name] = found
        self.ledger.add("checks", time.monotonic() - started)
        return Live(session, info, server, port, keepalive, problems, overlap, role, front.proxy_role, launch,
                    launch_checks=instrument_check("keep-alive probe", probe_problem), answers=answers, host=host)
