"""From options to an ordered list of sessions (one server start) and trials (one measurement)."""

from __future__ import annotations

import fnmatch
import random
from dataclasses import dataclass

from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.errors import UserError
from pywebbench.options import CpuSplit, RunOptions
from pywebbench.results.model import TrialSpec
from pywebbench.workloads import Workload, get_workload


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


def make_plan(catalog: Catalog, options: RunOptions, available_cpus: tuple[int, ...]) -> Plan:
    stacks, skipped = select_stacks(catalog, options.stacks)
    if not stacks:
        raise UserError("every selected stack is unavailable here (see `pywebbench list`)")
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
                )
                for w in workloads
            )
            sessions.append(Session(stack, round_no, workers, threads, trials, workloads))
    return Plan(tuple(sessions), tuple(skipped), split, seed)
