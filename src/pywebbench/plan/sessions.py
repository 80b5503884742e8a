"""From options to an ordered list of sessions (one server start) and trials (one measurement)."""

from __future__ import annotations

import fnmatch
import hashlib
import re
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.knob_declarations import AppEnvironment, fieldless_knobs
from pywebbench.plan.options import CpuSplit, RunOptions
from pywebbench.plan import protocol_plan
from pywebbench.results.model import KnobSettings, TrialSpec, with_settings
from pywebbench.results.server import AUTO_WORKERS
from pywebbench.catalog.workloads import Needs, Workload


@dataclass(frozen=True)
class Session:
    """One start of one stack's server, measured under one or more trials."""

    stack: Stack
    round: int
    workers: int
    threads: int
    trials: tuple[TrialSpec, ...]
    workloads: tuple[Workload, ...]
    point: tuple[tuple[str, Any], ...] = ()
    """The sweep point (knob, value) this session measures; () outside a sweep."""
    alias: str = ""
    app_env: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        return f"{self.stack.id}#{self.alias}" if self.alias else self.stack.id

    @property
    def stack_cpus(self) -> tuple[int, ...]:
        return self.trials[0].stack_cpus if self.trials else ()


@dataclass(frozen=True)
class Variant:
    """A stack as a plan runs it: itself, or a named copy with extra app environment (calibrate)."""

    stack: Stack
    alias: str = ""
    app_env: tuple[tuple[str, str], ...] = ()
    workloads: tuple[str, ...] = ()
    """Only these workloads (a preset's second variant of a stack); () = all it serves."""

    @property
    def label(self) -> str:
        return f"{self.stack.id}#{self.alias}" if self.alias else self.stack.id


@dataclass(frozen=True)
class Plan:
    sessions: tuple[Session, ...]
    skipped: tuple[tuple[str, str], ...]
    """(stack id, reason) for stacks a glob matched that cannot run here."""
    split: CpuSplit
    seed: int

    @property
    def trials(self) -> tuple[TrialSpec, ...]:
        return tuple(t for s in self.sessions for t in s.trials)


def select_stacks(catalog: Catalog, patterns: tuple[str, ...]) -> tuple[list[Stack], list[tuple[str, str]]]:
    """Stacks matching the patterns, in catalog order; named-but-impossible ones are errors.

    A pattern without wildcards must name one stack (or a server's default variant, so
    `starlette:uvicorn` is Uvicorn with uvloop and httptools). A glob matches whole stack ids
    (`*` is the whole catalog), and may also match stacks that are unavailable here: those are
    skipped with their reason, not run.
    """
    chosen: dict[str, Stack] = {}
    skipped: dict[str, str] = {}
    for pattern in patterns:
        is_glob = any(ch in pattern for ch in "*?[")
        if ":" not in pattern and not is_glob:  # a glob matches whole ids: '*' is every stack
            raise UserError(f"stack {pattern!r} must look like FRAMEWORK:SERVER[-MODEL]")
        if is_glob:
            matches = [s for s in catalog.stacks if fnmatch.fnmatchcase(s.id, pattern)]
            if not matches:
                raise UserError(f"no stack matches {pattern!r} (see `pywebbench list`)")
        else:
            stack = catalog.resolve(pattern)
            if stack.unavailable:
                raise UserError(f"{stack.id} is unavailable here: {stack.unavailable}")
            matches = [stack]
        for stack in matches:
            if stack.unavailable:
                skipped[stack.id] = stack.unavailable
            else:
                chosen[stack.id] = stack
    return list(chosen.values()), sorted(skipped.items())


def needs_of(plan: Plan) -> frozenset[Needs]:
    """The backing services this plan's workloads and stacks need."""
    needs: set[Needs] = {n for s in plan.sessions for w in s.workloads for n in w.needs}
    return frozenset(needs)


def serves(stack: Stack, workload: Workload) -> bool:
    return left_out(stack, workload) is None


def left_out(stack: Stack, workload: Workload) -> str | None:
    """Why this stack cannot serve this workload, one line (a shape says its own), or None."""
    if stack.server.workloads is not None:
        return None if workload.name in stack.server.workloads else \
            f"{stack.server.title} serves {', '.join(sorted(stack.server.workloads))} only"
    if workload.nginx_only:
        return "served by nginx alone"
    return workload.shape.left_out(stack) if workload.shape is not None else None


def left_out_pairs(variants: Sequence[Variant], workloads: Sequence[Workload]) -> list[tuple[str, str]]:
    """('stack workload', why) for each shape a planned stack cannot serve (WebSocket on WSGI); the
    static baseline's split (nginx serves it alone) goes unsaid, as before."""
    return [(f"{v.label} {w.name}", why) for v in variants for w in workloads
            if w.shape is not None and (why := left_out(v.stack, w)) is not None]


def with_requirements(stack: Stack, workloads: Sequence[Workload]) -> Stack:
    """The stack with what its workloads need in its environment (Uvicorn's WebSocket library)."""
    if stack.server.native is not None:
        return stack
    extra = tuple(dict.fromkeys(r for w in workloads if w.shape is not None for r in w.shape.requirements(stack)))
    return replace(stack, extra_requirements=stack.extra_requirements + extra) if extra else stack


def knobs_for(workload: Workload, options: RunOptions) -> dict[str, Any]:
    """The knobs that shape this workload's result, recorded in (and comparing) its trials."""
    knobs: dict[str, Any] = {"topology": options.topology}
    if options.rtt_s is not None:
        knobs["rtt_s"] = options.rtt_s
    if Needs.DATABASE in workload.needs:
        knobs.update(max_db_sessions=options.max_db_sessions, db_pool=options.db_pool)
    if workload.name == "db":
        knobs["db_delay_s"] = options.db_delay_s
    if workload.name == "upstream":
        knobs["upstream_delay_s"] = options.upstream_delay_s
    if workload.name == "cpu":
        knobs["cpu_size"] = options.cpu_size
    return knobs


def pool_problem(session: Session) -> str | None:
    """Why this session's app-side pools cannot all get a database session, or None.

    Each worker opens its --db-pool connections at start and keeps them; pgbouncer in session
    mode binds each to a server session for its whole life. When the workers hold more than
    --max-db-sessions, the surplus waits in pgbouncer's queue for a session that is never
    released, and the requests on those connections hang: a configuration that cannot work.
    """
    for spec in session.trials:
        if not spec.db_pool or spec.max_db_sessions is None:
            continue
        held = session.workers * spec.db_pool
        if held > spec.max_db_sessions:
            return (f"{session.stack.id}: {session.workers} worker(s) x --db-pool {spec.db_pool} hold {held} "
                    f"database sessions, over --max-db-sessions {spec.max_db_sessions}: the pooled connections "
                    f"beyond the cap would wait forever; lower --db-pool or --workers, or raise --max-db-sessions")
    return None


def point_overrides(point: tuple[tuple[str, Any], ...]) -> dict[str, Any]:
    """RunOptions fields a sweep point sets; stack_cpus stays a count here."""
    return {name: value for name, value in point}


def with_point(options: RunOptions, overrides: dict[str, Any]) -> RunOptions:
    """The options at a sweep point: fields replaced, a field-less knob's value set in `knobs` by name."""
    named = {k.name for k in fieldless_knobs()}
    generic = {name: value for name, value in overrides.items() if name in named}
    typed = {name: value for name, value in overrides.items() if name not in named}
    return replace(options, **typed, knobs=with_settings(options.knobs, generic))


def applied_env(knobs: KnobSettings) -> tuple[tuple[str, str], ...]:
    """The app environment the field-less knobs' settings declare (AppEnvironment): the launchers
    give the server its trials' app_env, so a knob reaches it the way calibrate's slowdown does."""
    declared = {k.name: k for k in fieldless_knobs()}
    return tuple((knob.applies.variable, f"{value:g}" if isinstance(value, float) else str(value))
                 for name, value in knobs
                 if (knob := declared.get(name)) is not None and isinstance(knob.applies, AppEnvironment))


def point_label(point: tuple[tuple[str, Any], ...]) -> str:
    """'connections=25,db_delay_s=0.02': part of every trial id, so it never changes (a results
    file resumes by its trial ids); the knobs in words are plan/knobs.py's."""
    return ",".join(f"{name}={_point_value(name, value)}" for name, value in point)


def _point_value(name: str, value: Any) -> str:
    if name == "workers" and value == AUTO_WORKERS:
        return "auto"
    if isinstance(value, str) and not re.fullmatch(r"[\w.=+<>~!-]+", value):
        # An id names files (the generators' reports): a path or URL is made safe, and kept apart by a hash.
        return re.sub(r"[^\w.=+-]+", "_", value)[-40:].strip("_") + "-" + hashlib.sha256(value.encode()).hexdigest()[:8]
    return f"{value:g}" if isinstance(value, float) else str(value)


def quota_problem(cpu_quota: float | None, stack_cpus: tuple[int, ...]) -> str | None:
    """Why a CPU quota cannot bind the stack's CPUs: a quota above them is never reached."""
    if cpu_quota is None or not stack_cpus or cpu_quota <= len(stack_cpus):
        return None
    return (f"cpu_quota {cpu_quota:g} is more than the {len(stack_cpus)} CPU(s) the stack is given "
            f"(--stack-cpus {','.join(map(str, stack_cpus))}): it could never throttle; give the stack more CPUs "
            "or a smaller quota")


def cpus_for(count: int, split: CpuSplit, available: tuple[int, ...]) -> tuple[int, ...]:
    """k CPUs for the stack: its own first, then the generator's (shared, as the plan says)."""
    if count < 1 or count > len(available):
        raise UserError(f"stack_cpus={count}: this machine has {len(available)} usable CPUs")
    order = list(split.stack) + [c for c in available if c not in split.stack]
    return tuple(sorted(order[:count]))


def choose_stacks(catalog: Catalog, options: RunOptions) -> tuple[list[Stack], list[tuple[str, str]]]:
    stacks, skipped = select_stacks(catalog, options.stacks)
    if options.driver is not None:
        stacks = [replace(s, driver_override=options.driver) for s in stacks if s.server.native is None]
    wanted = [catalog.workload(name) for name in options.workloads]
    for stack in list(stacks):
        if not any(serves(stack, w) for w in wanted):
            stacks.remove(stack)
            why = "; ".join(dict.fromkeys(r for r in (left_out(stack, w) for w in wanted) if r))
            skipped.append((stack.id, f"serves none of the workloads {', '.join(options.workloads)}: {why}"))
    if not stacks:
        raise UserError("no selected stack can run these workloads here (see `pywebbench list`)")
    return stacks, skipped


def _variants(catalog: Catalog, options: RunOptions, variants: Sequence[Variant] | None,
              extra: Sequence[Variant]) -> tuple[list[Variant], list[tuple[str, str]]]:
    """What the plan runs (the options' stacks unless given, then the extra variants), and the
    stacks left out with why."""
    skipped: list[tuple[str, str]] = []
    if variants is None:
        stacks, skipped = choose_stacks(catalog, options)
        variants = [Variant(s) for s in stacks]
    chosen = [*variants, *extra]
    if options.db != "postgresql":  # Python stacks read /posts from it; Go and nginx keep theirs
        chosen = [replace(v, stack=replace(v.stack, db=options.db)) if v.stack.server.native is None else v
                  for v in chosen]
    return chosen, skipped


def make_plan(
    catalog: Catalog,
    options: RunOptions,
    available_cpus: tuple[int, ...],
    points: Sequence[tuple[tuple[str, Any], ...]] = ((),),
    *,
    variants: Sequence[Variant] | None = None,
    extra: Sequence[Variant] = (),
    rounds: Sequence[int] | None = None,
    keep: Callable[[Session], bool] = lambda session: True,
) -> Plan:
    """Sessions for every round x sweep point x stack, in a fresh random order each round.

    Points are shuffled too, but each point's stacks stay together, so a sweep restarts a
    service (pgbouncer, the upstream) once per point and round rather than per stack.
    """
    variants, skipped = _variants(catalog, options, variants, extra)
    workloads = tuple(catalog.workload(name) for name in dict.fromkeys(options.workloads))
    skipped = [*skipped, *left_out_pairs(variants, workloads)]
    unserved = protocol_plan.checked(options, points, workloads)  # the cells a stack cannot serve go here
    split = options.cpu_split(available_cpus)
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    sessions: list[Session] = []
    planned_flat: set[tuple[object, ...]] = set()
    round_numbers = list(rounds) if rounds is not None else list(range(1, options.rounds + 1))
    shuffle = options.rounds > 1 or len(round_numbers) > 1 or (round_numbers and round_numbers[0] > 1)
    for round_no in round_numbers:
        # One RNG stream per round, so an extra round (--precision, --resume) has its own order.
        round_rng = random.Random(rng.randrange(2**31) + round_no)
        point_order = list(points)
        if shuffle:
            round_rng.shuffle(point_order)
        for point in point_order:
            knobs = point_overrides(point)
            cpu_count = knobs.pop("stack_cpus", None)
            opts = with_point(options, knobs)
            stack_cpus = cpus_for(int(cpu_count), split, available_cpus) if cpu_count is not None else split.stack
            if (why := quota_problem(opts.cpu_quota, stack_cpus)) is not None:
                raise UserError(why)
            order = list(variants)
            if shuffle:
                round_rng.shuffle(order)  # a fresh order every round, so drift favours no stack
            for variant in order:
                if protocol_plan.unserved(variant.stack, variant.label, opts.protocol, unserved, topology=opts.topology):
                    continue
                if not variant.stack.server.threaded and "threads" in knobs:
                    # A threads axis does not multiply stacks without threads: plan them once.
                    flat = tuple((k, v) for k, v in point if k != "threads")
                    if (round_no, variant.alias, variant.stack.id, flat) in planned_flat:
                        continue
                    planned_flat.add((round_no, variant.alias, variant.stack.id, flat))
                session = _session(variant, opts, round_no, point, workloads, stack_cpus, split.loadgen)
                problem = None if session is None else pool_problem(session)
                if problem is not None:
                    raise UserError(problem)
                if session is not None and keep(session):
                    sessions.append(session)
    skipped += protocol_plan.skips(unserved, len(sessions))
    return Plan(tuple(sessions), tuple(skipped), split, seed)


def _session(
    variant: Variant, options: RunOptions, round_no: int, point: tuple[tuple[str, Any], ...],
    workloads: tuple[Workload, ...], stack_cpus: tuple[int, ...], loadgen_cpus: tuple[int, ...],
) -> Session | None:
    served = tuple(w for w in workloads
                   if serves(variant.stack, w) and (not variant.workloads or w.name in variant.workloads))
    if not served:
        return None
    stack = with_requirements(variant.stack, served)
    per_cpu = options.workers_per_cpu if stack.server.native is None and not stack.server.single_process else None
    if options.workers == AUTO_WORKERS:
        workers = AUTO_WORKERS  # no flag: the server's own sizing (measure/sizing.py counts it)
    else:
        workers = options.workers or (per_cpu * len(stack_cpus) if per_cpu else stack.default_workers(len(stack_cpus)))
    threaded = stack.server.threaded
    threads = (options.threads or options.default_threads) if threaded else 1
    per_workload = dict(options.workload_requests)
    name = variant.label
    suffix = f"-{point_label(point)}" if point else f"-c{options.connections}"
    app_env = variant.app_env + applied_env(options.knobs)
    trials = tuple(
        TrialSpec(
            trial_id=f"r{round_no}-{name}-{w.name}{suffix}",
            stack_id=stack.id,
            workload=w.name,
            connections=options.connections,
            duration_s=options.duration_s,
            warmup_s=options.warmup_s,
            round=round_no,
            generator=options.generator,
            workers=options.workers,
            threads=options.threads if threaded else None,
            stack_cpus=stack_cpus,
            loadgen_cpus=loadgen_cpus,
            requests=per_workload.get(w.name, options.requests),
            rate=options.rate,
            cpu_quota=options.cpu_quota,
            memory_limit=options.memory_limit,
            python=options.python,
            pin=options.pin,
            protocol=options.protocol,
            alias=variant.alias,
            app_env=app_env,
            knobs=options.knobs,
            method=options.method,
            launch=round_no if not options.method.paired else 0,
            settle_s=options.settle_s if options.method.paired else 0.0,
            **knobs_for(w, options),
        )
        for w in served
    )
    return Session(stack, round_no, workers, threads, trials, served, point, variant.alias, app_env)
