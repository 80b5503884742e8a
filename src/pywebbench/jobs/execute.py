"""A whole run: plan, tools check, services, runner, extra rounds for --precision, resume.

`run`, `sweep` and `calibrate` differ only in the Job they hand to `execute`: its sweep
points and stack variants. Everything is saved trial by trial, so an interrupted job keeps
what it finished and `--resume` runs only what is missing.
"""

from __future__ import annotations

import sys
import time
import uuid
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pywebbench.analyze.host_noise import noise_reading
from pywebbench import __version__
from pywebbench.analyze.precision import wide_labels
from pywebbench.analyze.allocation import open_rule, ranking_rule
from pywebbench.analyze.stopping import first_look
from pywebbench.catalog.registry import BASELINE_STACK, Catalog
from pywebbench.stage.envs import EnvironmentBuilder, EnvProvider, cache_root
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadGenerator
from pywebbench.loadgen.registry import ByWindow
from pywebbench.plan.budgeting import estimate_seconds, fit_plan_to_budget
from pywebbench.plan.method_choice import choose_methods
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_json
from pywebbench.measure.accounting import choose_accountant
from pywebbench.measure.round_plan import Budget, RoundPlan
from pywebbench.measure.rounds import Rounds
from pywebbench.plan.sessions import Plan, Session, Variant, make_plan, needs_of, point_label
from pywebbench.plan.presets import get_preset
from pywebbench.measure.machine import machine_info, usable_cpus
from pywebbench.stage.reference import GoBuildError
from pywebbench.results.model import ResultSet, RunHeader, TrialResult
from pywebbench.results.store import ResultsWriteError, ResultsWriter, load_results, results_path
from pywebbench.measure.runner import LaunchLimits, Progress, Runner
from pywebbench.measure.profiled import profile_after
from pywebbench.core.orphans import guarded_run
from pywebbench.core.procs import stop_signals
from pywebbench.services import ServiceError
from pywebbench.services.backing import Backing, backing_config
from pywebbench.services.watchdog import ServiceLost, Watchdog
from pywebbench.measure.roles import LoadSettings, LocalPlacement, Placement
from pywebbench.measure.placing import place_roles
from pywebbench.jobs.preflight import preflight
from pywebbench.plan.hosts import Inventory
from pywebbench.plan.sweep import grid, parse_knobs

Point = tuple[tuple[str, Any], ...]
ABORTED = "aborted"
"""The end status of a run stopped by a service that died and could not be restarted."""

EnvHook = Callable[[Backing], EnvProvider]
"""Wraps the environment builder once the services run (the `app` command's --setup needs them)."""


@dataclass(frozen=True)
class Job:
    kind: str
    """run, sweep or calibrate: stored in the header, so --resume rebuilds the same plan."""
    options: RunOptions
    knobs: tuple[str, ...] = ()
    """The --knob texts of a sweep; their grid gives the points."""
    variants: tuple[Variant, ...] | None = None
    preset: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    command: tuple[str, ...] | None = None
    """The command line to record, when sys.argv holds what must not be (the app's --env values)."""
    env_hook: EnvHook | None = None
    """Wraps the environment builder once the services are up (the `app` command's --setup)."""

    @property
    def points(self) -> tuple[Point, ...]:
        return points_of(self.knobs)


@dataclass(frozen=True)
class Outcome:
    run_dir: Path
    status: str
    wall_s: float
    ledger: dict[str, float]
    rounds: int


def job_from_results(results: ResultSet) -> Job:
    """The job an interrupted results file was running, for --resume."""
    stored = dict(results.header.options)
    kind = str(stored.pop("job", "run"))
    if kind == "calibrate":
        raise UserError("a calibration cannot be resumed; run `pywebbench calibrate` again")
    if kind == "tune":
        raise UserError("a tuning run cannot be resumed; its probes are in the results file, run --tune again")
    knobs = tuple(stored.pop("knobs", ()) or ())
    preset = stored.pop("preset", None)
    return Job(kind, from_json(stored), knobs, preset=preset)


def preset_variants(catalog: Catalog, preset: str | None) -> tuple[Variant, ...]:
    """A preset's second variants of stacks (seed 001's sync client), as plan variants."""
    if preset is None:
        return ()
    return tuple(
        Variant(replace(catalog.resolve(v.stack), driver_override=v.driver), alias=v.alias, workloads=v.workloads)
        for v in get_preset(preset).variants
    )


def _missing_only(plan: Plan, done: set[str]) -> Plan:
    sessions: list[Session] = []
    for session in plan.sessions:
        pairs = [(t, w) for t, w in zip(session.trials, session.workloads, strict=True) if t.trial_id not in done]
        if pairs:
            sessions.append(replace(session, trials=tuple(t for t, _ in pairs), workloads=tuple(w for _, w in pairs)))
    return replace(plan, sessions=tuple(sessions))


def _complete_rounds(trials: Sequence[TrialResult]) -> int:
    """Rounds in which every stack and workload of the run got its window."""
    members = {(t.spec.label, t.spec.workload, t.spec.cell) for t in trials}
    per_round: dict[int, set[tuple[object, ...]]] = {}
    for t in trials:
        per_round.setdefault(t.spec.round, set()).add((t.spec.label, t.spec.workload, t.spec.cell))
    return sum(1 for seen in per_round.values() if seen == members)


def _run_rounds(job: Job, runner: Runner, plan: Plan, catalog: Catalog, cpus: tuple[int, ...],
                extra: tuple[Variant, ...], budget: Budget, baseline: str,
                on_note: Callable[[str], None], start_round: int = 1, min_rounds: int | None = None) -> int:
    """The interleaved and duet methods: each sweep point its own set of live servers."""
    options = job.options
    points = job.points
    rounds = Rounds(runner, method=options.method, rounds_per_launch=options.rounds_per_launch, seed=plan.seed,
                    on_note=on_note)
    most = 0
    for index, point in enumerate(points):
        def sessions(round_no: int, point: Point = point) -> tuple[Session, ...]:
            one = make_plan(catalog, replace(options, seed=plan.seed), cpus, (point,), variants=job.variants,
                            extra=extra, rounds=[round_no])
            return one.sessions
        adaptive = options.allocation == "adaptive"
        too_wide = open_rule(baseline, options.precision) if options.precision else \
            ranking_rule(baseline) if adaptive else None
        outcome = rounds.run(RoundPlan(
            sessions=sessions, first_round=start_round, max_rounds=options.max_rounds, too_wide=too_wide,
            min_rounds=first_look(options.rounds, options.rounds_per_launch, options.precision) if min_rounds is None
            else min_rounds, baseline=baseline,
            budget=budget.share(len(points) - index), adaptive=adaptive, block=options.launch_block,
            answered="precision" if options.precision else "placed", noise=noise_reading(baseline)))
        most = max(most, outcome.rounds)
        where = f" at {point_label(point)}" if point else ""
        on_note(f"{outcome.rounds} rounds in {outcome.launches} launch(es){where}; stopped: {outcome.stopped}")
    return most


@dataclass(frozen=True)
class _Start:
    """Where a job begins: its plan, and for a resumed paired run the rounds still owed."""

    plan: Plan
    extra: tuple[Variant, ...]
    first_rounds: int
    start_round: int = 1
    min_rounds: int | None = None


def _start(job: Job, catalog: Catalog, cpus: tuple[int, ...], run_dir: Path, resume: ResultSet | None,
           on_note: Callable[[str], None]) -> _Start:
    options = job.options
    paired = options.method.paired
    first_rounds = max(options.rounds, 3) if options.precision and not paired else options.rounds
    extra = preset_variants(catalog, job.preset)
    plan = make_plan(catalog, options, cpus, job.points, variants=job.variants, extra=extra,
                     rounds=range(1, first_rounds + 1))
    if resume is None:
        return _Start(plan, extra, first_rounds)
    if paired:
        # A finished window is kept (its pairs still count); the resumed run adds the rounds
        # still missing, numbered after the last recorded one.
        start_round = max((t.spec.round for t in resume.trials), default=0) + 1
        complete = _complete_rounds(resume.trials)
        on_note(f"resuming {run_dir}: {len(resume.trials)} windows already recorded ({complete} whole "
                f"rounds); new rounds start at {start_round}")
        return _Start(plan, extra, first_rounds, start_round, max(0, options.rounds - complete))
    done = {t.spec.trial_id for t in resume.trials}
    plan = _missing_only(plan, done)
    on_note(f"resuming {run_dir}: {len(done)} trials already recorded, {len(plan.trials)} to run")
    return _Start(plan, extra, first_rounds)


Part = tuple[Job, _Start]
"""Some workloads of a run, the method that measures them, and where they begin."""


def _started_with_method(job: Job, catalog: Catalog, cpus: tuple[int, ...], run_dir: Path, resume: ResultSet | None,
                         on_note: Callable[[str], None], *,
                         tuning: bool) -> tuple[Job, _Start, tuple[Part, ...]]:
    """The plan, made again with the method `--method auto` chose (said in one line); and when
    it chose one method per workload, each part's job and start (else no parts)."""
    held: list[str] = []  # the whole plan's resume line, said only if that plan is the one run
    begun = _start(job, catalog, cpus, run_dir, resume, held.append)
    chosen, why = choose_methods(job.options, begun.plan, tuning=tuning)
    for text in held if len(chosen) == 1 and chosen[0].method is job.options.method else ():
        on_note(text)
    if why:
        on_note(why)
    if len(chosen) > 1:
        parts = []
        for part in chosen:
            part_job = replace(job, options=replace(job.options, method=part.method, workloads=part.workloads))
            own = None if resume is None else replace(
                resume, trials=tuple(t for t in resume.trials if t.spec.workload in part.workloads))
            parts.append((part_job, _start(part_job, catalog, cpus, run_dir, own, _said_of(part.workloads, on_note))))
        return job, begun, tuple(parts)
    if chosen[0].method is job.options.method:
        return job, begun, ()
    job = replace(job, options=replace(job.options, method=chosen[0].method))
    return job, _start(job, catalog, cpus, run_dir, resume, on_note), ()


def _said_of(workloads: tuple[str, ...], on_note: Callable[[str], None]) -> Callable[[str], None]:
    return lambda text: on_note(f"{', '.join(workloads)}: {text}")


def _fitted(parts: tuple[Part, ...], points: int, on_note: Callable[[str], None]) -> tuple[Part, ...]:
    """Each part's rounds per launch fitted to its equal share of the budget (said per part)."""
    fitted = []
    for part_job, begun in parts:
        options = part_job.options
        share = replace(options, budget_s=options.budget_s / len(parts)) if options.budget_s else options
        options, line = fit_plan_to_budget(share, begun.plan, points)
        on_note(f"{', '.join(options.workloads)} ({options.method}): {line}")
        fitted.append((replace(part_job, options=replace(options, budget_s=part_job.options.budget_s)), begun))
    return tuple(fitted)


def _run_parts(parts: tuple[Part, ...], runner: Runner, catalog: Catalog, cpus: tuple[int, ...], budget: Budget,
               baseline: str, on_note: Callable[[str], None]) -> int:
    """Each part's rounds by its own method, one part after the other, each with an equal share
    of what is left of the budget."""
    most = 0
    for index, (part_job, begun) in enumerate(parts):
        on_note(f"{', '.join(part_job.options.workloads)}: {part_job.options.method}")
        most = max(most, _run_rounds(part_job, runner, begun.plan, catalog, cpus, begun.extra,
                                     budget.share(len(parts) - index), baseline, on_note, begun.start_round,
                                     begun.min_rounds))
    return most


def _header(job: Job, plan: Plan, generator: LoadGenerator, baseline: str) -> RunHeader:
    stored: dict[str, Any] = {**job.options.to_json(), "seed": plan.seed, "job": job.kind, "knobs": list(job.knobs),
                              "preset": job.preset, "baseline": baseline, **job.extra}
    return RunHeader(
        run_id=uuid.uuid4().hex[:12], created_at=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        pywebbench_version=__version__, command=job.command or tuple(sys.argv), options=stored, machine=machine_info(),
        tools={"generator": generator.version(), "python": f"{sys.version.split()[0]} at {sys.base_prefix}",
               **(generator.other_versions() if isinstance(generator, ByWindow) else {})},
        planned_trials=len(plan.trials),
    )


def _runner(services: ExitStack, job: Job, header: RunHeader, plan: Plan, writer: ResultsWriter,
            generator: LoadGenerator, run_dir: Path, on_progress: Callable[[Progress], None],
            on_note: Callable[[str], None], inventory: Inventory | None = None) -> Runner:
    """Backing services started and watched, the accountant ready, and the runner over them."""
    options = job.options
    config = backing_config(plan, options, job.points, lanes=int(job.extra.get("lanes", 0)),
                            database_url=str(job.extra.get("database_url", "")))
    hosts = place_roles(services, options, needs_of(plan), inventory, run_dir, on_note, config)
    accountant = choose_accountant(services, header.run_id, on_note)
    backing = Backing(config, cache_root())
    service_start = time.monotonic()
    try:
        services.enter_context(backing)
    except (ServiceError, GoBuildError, OSError, ValueError) as exc:
        raise UserError(f"backing services failed to start: {str(exc).splitlines()[0]}") from exc
    for record in backing.records():
        writer.add_service(record)
    watchdog = services.enter_context(Watchdog(on_note))  # stopped before the services are
    backing.watch(watchdog)
    placement: Placement = hosts if hosts is not None else \
        LocalPlacement(backing, options.topology, run_dir, watchdog, accountant)
    tools = placement.load_tools(generator, LoadSettings(
        options.generator, options.keepalive, options.timeout_s, run_dir / "ceiling", writer.add_service,
        on_ceiling_seconds=lambda s: runner.ledger.add("generator ceiling", s)))
    runner = Runner(
        run_dir=run_dir, writer=writer, tools=tools,
        builder=job.env_hook(backing) if job.env_hook is not None else EnvironmentBuilder(),
        python=sys.executable, limits=LaunchLimits(options.ready_timeout_s, options.timeout_s, options.keepalive),
        backing=backing, placement=placement, accountant=accountant, watchdog=watchdog,
        on_progress=on_progress, on_note=on_note,
    )
    runner.ledger.add("service starts", time.monotonic() - service_start)
    return runner


def _run_restarts(job: Job, runner: Runner, begun: _Start, catalog: Catalog, cpus: tuple[int, ...],
                  budget: Budget, baseline: str, run_dir: Path, on_note: Callable[[str], None]) -> int:
    """The restart method: the planned rounds, then one more at a time for --precision."""
    options = job.options
    runner.run(begun.plan)
    rounds = begun.first_rounds
    while options.precision and rounds < options.max_rounds and budget.allows(0.0):
        wide = wide_labels(run_dir, options.precision)
        if not wide:
            break
        rounds += 1
        keep = wide | {baseline}
        on_note(f"precision ±{options.precision:.0%} not reached for {len(wide)} stack(s): round {rounds}")
        more = make_plan(catalog, replace(options, seed=begun.plan.seed), cpus, job.points, variants=job.variants,
                         extra=begun.extra, rounds=[rounds], keep=lambda s: s.label in keep)
        runner.run(more)
    return rounds


def execute(
    job: Job,
    catalog: Catalog,
    *,
    run_dir: Path,
    resume: ResultSet | None = None,
    on_plan: Callable[[Plan, float], None] = lambda plan, seconds: None,
    on_progress: Callable[[Progress], None] = lambda progress: None,
    on_note: Callable[[str], None] = lambda text: None,
    baseline: str = BASELINE_STACK,
    drive: Callable[[Runner, Plan, Budget], int] | None = None,
) -> Outcome:
    """`drive` (--tune), when given, measures instead of the method's rounds once the services are up; it returns its rounds."""
    options = job.options
    generator = ByWindow(options.generator)  # a window with a rate goes to oha or vegeta
    cpus = usable_cpus()
    job, begun, parts = _started_with_method(job, catalog, cpus, run_dir, resume, on_note, tuning=drive is not None)
    options, plan = job.options, begun.plan
    inventory = preflight(options, plan, job.points, baseline, run_dir, resuming=resume is not None)
    on_plan(plan, estimate_seconds(plan, options))
    if parts:
        parts = _fitted(parts, len(job.points), on_note)
    elif options.method.paired and drive is None:
        options, line = fit_plan_to_budget(options, plan, len(job.points), lends=job.kind != "calibrate")
        on_note(line)
        job = replace(job, options=options)
    header = _header(job, plan, generator, baseline)
    writer = ResultsWriter(results_path(run_dir), header)
    started = time.monotonic()
    budget = Budget(started + options.budget_s if options.budget_s else None)
    status = "interrupted"
    runner: Runner | None = None
    rounds = begun.first_rounds
    try:
        with stop_signals(), guarded_run(cache_root() / "children", on_note), ExitStack() as services:  # guard outlasts services
            runner = _runner(services, job, header, plan, writer, generator, run_dir, on_progress, on_note, inventory)
            if drive is not None:
                rounds = drive(runner, plan, budget)
            elif parts:
                rounds = _run_parts(parts, runner, catalog, cpus, budget, baseline, on_note)
            elif options.method.paired:
                rounds = _run_rounds(job, runner, plan, catalog, cpus, begun.extra, budget, baseline, on_note,
                                     begun.start_round, begun.min_rounds)
            else:
                rounds = _run_restarts(job, runner, begun, catalog, cpus, budget, baseline, run_dir, on_note)
            profile_after(options, runner, plan, on_note, tuning=drive is not None)  # never between two windows
            status = "complete"
    except KeyboardInterrupt:
        on_note("interrupted: stopping; finished trials are saved")
    except ServiceLost as exc:
        status = ABORTED
        on_note(f"{exc}; finished trials are saved (--resume {run_dir} goes on)")
    finally:
        try:
            writer.finish(status)
        except ResultsWriteError:
            pass  # the write that failed first is the one reported; the file ends at its last whole record
        writer.close()
    ledger = dict(runner.ledger.seconds) if runner is not None else {}
    return Outcome(run_dir, status, time.monotonic() - started, ledger, rounds)


def load_for_resume(run_dir: Path) -> ResultSet:
    results = load_results(run_dir)
    if results.complete:
        raise UserError(f"{run_dir} is complete; nothing to resume")
    return results


def points_of(texts: Sequence[str]) -> tuple[Point, ...]:
    return tuple(tuple(p.overrides().items()) for p in grid(parse_knobs(texts)))
