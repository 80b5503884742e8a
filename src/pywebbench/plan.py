"""From options to an ordered list of sessions (one server start) and trials (one measurement)."""

from __future__ import annotations

import fnmatch
import random
from dataclasses import dataclass, replace
from typing import Any

from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.errors import UserError
from pywebbench.options import CpuSplit, RunOptions
from pywebbench.results.model import TrialSpec
from pywebbench.workloads import Needs, Workload, get_workload


@dataclass(frozen=True)
class Session:
    """One start of one stack's server, measured under one or more trials."""

    stack: Stack
    round: int
    workers: int
    threads: int
    trials: tuple[TrialSpec, ...]
    workloads: tuple[Workload, ...]


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
    `starlette:uvicorn` is Uvicorn with uvloop and httptools). A glob may also match stacks
    that are unavailable here: those are skipped with their reason, not run.
    """
    chosen: dict[str, Stack] = {}
    skipped: dict[str, str] = {}
    for pattern in patterns:
        if ":" not in pattern:
            raise UserError(f"stack {pattern!r} must look like FRAMEWORK:SERVER[-MODEL]")
        is_glob = any(ch in pattern for ch in "*?[")
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
    if stack.server.workloads is not None:
        return workload.name in stack.server.workloads
    return not workload.nginx_only


def knobs_for(workload: Workload, options: RunOptions) -> dict[str, Any]:
    """The knobs that shape this workload's result, recorded in (and comparing) its trials."""
    knobs: dict[str, Any] = {"topology": options.topology}
    if Needs.DATABASE in workload.needs:
        knobs.update(max_db_sessions=options.max_db_sessions, db_pool=options.db_pool)
    if workload.name == "db":
        knobs["db_delay_s"] = options.db_delay_s
    if workload.name == "upstream":
        knobs["upstream_delay_s"] = options.upstream_delay_s
    if workload.name == "cpu":
        knobs["cpu_size"] = options.cpu_size
    return knobs


def make_plan(catalog: Catalog, options: RunOptions, available_cpus: tuple[int, ...]) -> Plan:
    stacks, skipped = select_stacks(catalog, options.stacks)
    if options.driver is not None:
        stacks = [replace(s, driver_override=options.driver) for s in stacks if s.server.native is None]
    wanted = [get_workload(name) for name in options.workloads]
    for stack in list(stacks):
        if not any(serves(stack, w) for w in wanted):
            stacks.remove(stack)
            skipped.append((stack.id, f"serves none of the workloads {', '.join(options.workloads)}"))
    if not stacks:
        raise UserError("no selected stack can run these workloads here (see `pywebbench list`)")
    workloads = tuple(get_workload(name) for name in dict.fromkeys(options.workloads))
    split = options.cpu_split(available_cpus)
    seed = options.seed if options.seed is not None else random.SystemRandom().randrange(2**31)
    rng = random.Random(seed)
    sessions: list[Session] = []
    for round_no in range(1, options.repeats + 1):
        order = list(stacks)
        if options.repeats > 1:
            rng.shuffle(order)  # a fresh order every round, so drift favours no stack
        for stack in order:
            served = tuple(w for w in workloads if serves(stack, w))
            if not served:
                continue
            workers = options.workers or stack.default_workers(len(split.stack))
            threads = options.threads or (options.default_threads if stack.server.threaded else 1)
            trials = tuple(
                TrialSpec(
                    trial_id=f"r{round_no}-{stack.id}-{w.name}-c{options.connections}",
                    stack_id=stack.id,
                    workload=w.name,
                    connections=options.connections,
                    duration_s=options.duration_s,
                    warmup_s=options.warmup_s,
                    round=round_no,
                    generator=options.generator,
                    workers=options.workers,
                    threads=options.threads,
                    stack_cpus=split.stack,
                    loadgen_cpus=split.loadgen,
                    requests=options.requests,
                    **knobs_for(w, options),
                )
                for w in served
            )
            sessions.append(Session(stack, round_no, workers, threads, trials, served))
    return Plan(tuple(sessions), tuple(skipped), split, seed)
