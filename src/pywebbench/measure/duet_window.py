"""One duet window: two live stacks loaded at once, each by its own generator, the first to
start chosen at random (Bulej et al. 2020), both sides recorded with the other as partner."""

from __future__ import annotations

import random
import threading
import time
from contextlib import ExitStack
from dataclasses import replace

from pywebbench.catalog.workloads import Workload
from pywebbench.loadgen.base import LoadGenError, LoadRequest
from pywebbench.measure.accounting import WindowUsage
from pywebbench.measure.checks import instrument_check, trial_checks
from pywebbench.measure.confinement import ServerWatch, named_oom, sigkilled
from pywebbench.measure.isolation import Isolation
from pywebbench.measure.roles import PeakReading
from pywebbench.measure.runner import Runner
from pywebbench.measure.window import Live, died_during, load_failed, now
from pywebbench.results.model import LoadResult, TrialResult, TrialSpec, TrialStatus


class DuetWindow:
    """Measures duet windows on a set's live servers, isolated like every other window."""

    def __init__(self, runner: Runner, isolation: Isolation, rng: random.Random) -> None:
        self.runner = runner
        self.isolation = isolation
        self.rng = rng

    def __call__(self, live: Live, spec: TrialSpec, partner: Live, partner_spec: TrialSpec,
                 workload: Workload) -> None:
        """Both stacks loaded at once, each by its own generator, the first to start chosen at random."""
        runner = self.runner
        sides = [(live, spec), (partner, partner_spec)]
        if self._refuse_wrong_answers(sides, workload):
            return
        # The progress line names the pair (a log showed "[0/0] ... (starting)" for a whole duet run).
        runner.progress(f"{live.session.label} and {partner.session.label} {workload.name}",
                         spec.duration_s + spec.settle_s)
        self.isolation.before_window()
        if self.rng.random() < 0.5:
            sides.reverse()
        specs = [replace(sp, launch=s.launch, slot=i + 1) for i, (s, sp) in enumerate(sides)]
        runner.heal()
        mark = runner.watchdog.mark()
        runner.watchdog.during = f"{live.session.label} and {partner.session.label} {workload.name}"
        started_at = now()
        requests = [runner.windows.load_request(sp, s.port, workload.path, workload.requests, host=s.host,
                                                 schedule=workload.schedule)
                    for (s, _), sp in zip(sides, specs, strict=True)]
        watches = [ServerWatch(runner.accountant, s.role, local=bool(s.server.pids)) for s, _ in sides]
        self._duet_settle(requests, specs)
        runner.windows.drain_settled((live, partner))
        with ExitStack() as sampling:
            peak = runner.windows.db_peak(sampling, live, workload)
            usage = sampling.enter_context(runner.accountant.window(peak_of=(live.role, partner.role)))
            for watch in watches:
                watch.open()
            loads = self._duet_loads(requests)
            for watch in watches:
                watch.close()
        for i, ((side, _), side_spec) in enumerate(zip(sides, specs, strict=True)):
            self._record_side(side, sides[1 - i][0], side_spec, loads[i], workload, started_at, usage, peak, mark,
                              watches[i])
        runner.heal()

    def _refuse_wrong_answers(self, sides: list[tuple[Live, TrialSpec]], workload: Workload) -> bool:
        """A side whose answer was wrong is not loaded, and neither is its partner: both recorded why."""
        for side, _ in sides:
            problem = side.problems.get(workload.name)
            if problem is not None:
                for s, sp in sides:
                    self.runner.record(TrialResult(
                        replace(sp, launch=s.launch), s.info, TrialStatus.INVALID_RESPONSE, now(), now(),
                        keepalive=s.keepalive,
                        error=problem if s is side else f"partner {side.session.label}: {problem}"))
                return True
        return False

    def _duet_settle(self, requests: list[LoadRequest], specs: list[TrialSpec]) -> None:
        runner = self.runner
        work_dir = runner.run_dir / "loadgen"
        settles = [threading.Thread(target=runner.settle, args=(r, sp.settle_s, work_dir))
                   for r, sp in zip(requests, specs, strict=True)]
        started = time.monotonic()
        for t in settles:
            t.start()
        for t in settles:
            t.join()
        runner.ledger.add("settles", time.monotonic() - started)

    def _duet_loads(self, requests: list[LoadRequest]) -> list[LoadResult | LoadGenError | None]:
        """Both generators at once, started in the shuffled order: each load or its failure."""
        runner = self.runner
        work_dir = runner.run_dir / "loadgen"
        loads: list[LoadResult | LoadGenError | None] = [None, None]

        def drive(i: int) -> None:
            try:
                loads[i] = runner.generator.run(requests[i], work_dir)
            except LoadGenError as exc:
                loads[i] = exc

        started = time.monotonic()
        threads = [threading.Thread(target=drive, args=(i,)) for i in range(2)]
        for t in threads:  # in the shuffled order: the first side's generator starts first
            t.start()
        for t in threads:
            t.join()
        runner.ledger.add("measured windows", time.monotonic() - started)
        return loads

    def _record_side(self, side: Live, other: Live, side_spec: TrialSpec, load: LoadResult | LoadGenError | None,
                     workload: Workload, started_at: str, usage: WindowUsage, peak: PeakReading | None,
                     mark: int, watch: ServerWatch) -> None:
        runner = self.runner
        app = usage.usages.get(side.role)
        cgroup = watch.reading(app.peak_rss_mb if app is not None else None, killed=sigkilled(side.server.returncode()))
        if not isinstance(load, LoadResult):
            status, failure = named_oom(*load_failed(side, load if load is not None else LoadGenError("no result")),
                                        cgroup, side.session.label, side_spec)
            runner.record(runner.windows.mark_faults(
                TrialResult(side_spec, side.info, status, started_at, now(), keepalive=side.keepalive,
                            error=failure, server_cgroup=cgroup), mark))
            return
        status, error = TrialStatus.OK, None
        if (died := died_during(side)) is not None:
            status, error = TrialStatus.SERVER_FAILED, died
        status, error = named_oom(status, error, cgroup, side.session.label, side_spec)
        found = side.overlap.get(workload.name)
        result = TrialResult(
            side_spec, side.info, status, started_at, now(), load=load, keepalive=side.keepalive, error=error,
            db_sessions=peak.peak if peak is not None else None,
            resources=runner.windows.usages_for(side, usage, partner=other), sampler_cpu_s=usage.sampler_cpu_s,
            cpu_source=runner.accountant.source, steal_s=usage.steal_s, server_cgroup=cgroup,
        )
        result = runner.windows.mark_faults(result, mark)  # a backing service died meanwhile: the cause
        result = replace(result, checks=((found,) if found else ()) + side.launch_checks + trial_checks(result, None)
                         + instrument_check("#DB sampler", peak.error if peak is not None else None))
        runner.record(result)
