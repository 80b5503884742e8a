"""Tuning's search space: the candidates of each worker class and the stages they are measured in.

Not a full grid. Per worker class, stage 1 is a coarse geometric ladder of workers (1, 2, 4,
... up to the bound), at a middle thread count for threaded classes; stage 2 a ladder of
threads at the best worker count; then refinement stages put the geometric midpoints between
the best and its measured neighbours, on both axes, until nothing new is left (or the budget
is). Every stage after the first also holds the best so far and every candidate tied with
it, so a stage's candidates are always compared beside the incumbent, in the same rounds.
The bounds come from the machine's CPUs and memory. What a stage decided (its best and ties)
is analyze/tuning.py's.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from pywebbench.analyze.paired import Interval
from pywebbench.analyze.ratesearch import Capacity

MAX_THREADS = 32
"""The top of the threads ladder: a bound of this search (past it a GIL-bound worker only
queues), not of the servers."""
START_THREADS = 4
"""Threads per worker while the workers ladder runs, for threaded classes."""
MEMORY_SHARE = 0.5
"""Of the memory available at the start, the share the candidates live at once may use."""
PRIOR_MB_PER_PROCESS = 60.0
"""A Python server process's resident size before any is measured (a Flask worker is ~30 MiB)."""
MAX_CARRIED_TIES = 2
"""Ties carried into a stage beside its incumbent, the best-measured first."""
MAX_REFINE_STAGES = 3


@dataclass(frozen=True, order=True)
class Config:
    """One candidate: a stack (framework, server, worker class) with a worker and thread count."""

    stack: str
    workers: int
    threads: int
    """1 for classes without threads."""
    server: str = field(default="", compare=False)
    worker_class: str = field(default="", compare=False)

    @property
    def alias(self) -> str:
        return f"w{self.workers}t{self.threads}"

    @property
    def label(self) -> str:
        return f"{self.stack}#{self.alias}"


@dataclass(frozen=True)
class ClassSpace:
    """What one worker class lets the search vary (from the catalog)."""

    stack: str
    server: str
    worker_class: str
    threaded: bool
    single_process: bool

    def config(self, workers: int, threads: int) -> Config:
        return Config(self.stack, workers, threads if self.threaded else 1, self.server, self.worker_class)


@dataclass(frozen=True)
class Bounds:
    cpus: int
    available_mb: float
    max_workers: int
    max_threads: int
    text: str
    """The bound in words, as the report states it."""


def bounds_for(cpus: int, available_mb: float, live_at_once: int,
               mb_per_process: float = PRIOR_MB_PER_PROCESS) -> Bounds:
    """Workers up to 2 x CPUs + 1 (the rule Gunicorn's docs give), fewer if the candidates live
    at once would not fit in half the available memory; threads up to MAX_THREADS."""
    by_cpu = 2 * cpus + 1
    per_candidate = available_mb * MEMORY_SHARE / max(1, live_at_once)
    by_memory = max(1, int(per_candidate // mb_per_process) - 1)  # - 1: the master process
    workers = max(1, min(by_cpu, by_memory))
    text = (f"workers 1..{workers} (2 x {cpus} stack CPU(s) + 1 = {by_cpu}; memory allows {by_memory}: "
            f"{MEMORY_SHARE:.0%} of {available_mb:,.0f} MiB available over up to {live_at_once} candidates live "
            f"at once at {mb_per_process:.0f} MiB per process), threads 1..{MAX_THREADS}")
    return Bounds(cpus, available_mb, workers, MAX_THREADS, text)


def ladder(high: int) -> tuple[int, ...]:
    """1, 2, 4, ... below `high`, then `high` itself; a rung within 1.5x of `high` is dropped."""
    if high < 1:
        raise ValueError("the ladder needs a top of at least 1")
    rungs = []
    value = 1
    while value < high:
        rungs.append(value)
        value *= 2
    if rungs and high / rungs[-1] < 1.5 and len(rungs) > 1:
        rungs.pop()
    return (*rungs, high)


def refine_points(measured: Iterable[int], best: int, high: int) -> tuple[int, ...]:
    """The geometric midpoints between `best` and its nearest measured neighbours, where an
    unmeasured whole number lies between them."""
    values = sorted(set(measured) | {best})
    i = values.index(best)
    found: set[int] = set()
    for other in (values[i - 1] if i > 0 else None, values[i + 1] if i + 1 < len(values) else None):
        if other is None or abs(other - best) <= 1:
            continue
        mid = round(math.sqrt(best * other))
        if mid in (best, other):
            mid = (best + other) // 2
        if mid not in values and 1 <= mid <= high:
            found.add(mid)
    return tuple(sorted(found))


@dataclass(frozen=True)
class Stage:
    name: str
    configs: tuple[Config, ...]
    new: tuple[Config, ...]
    """Those first measured here (the rest are carried: the incumbent and its ties)."""


@dataclass(frozen=True)
class Measured:
    """One candidate in one stage."""

    config: Config
    value: float | None
    """The objective: req/s (the trimmed geometric mean over rounds), or the capacity in req/s."""
    interval: tuple[float, float] | None
    """The objective's 95% interval over rounds; for a capacity, the search's bracket."""
    ratio: float | None
    """To the stage's best (1 for the best itself): the paired ratio, or the capacities' ratio."""
    vs_best: Interval | None
    """The paired ratio's 95% interval (throughput); None for the best and for capacities."""
    tied: bool
    """Tied with the stage's best (the best itself too)."""
    rounds: int
    cpu_ms_per_req: float | None = None
    rss_mb: float | None = None
    capacity: Capacity | None = None
    cut_short: str | None = None
    """Why its measuring ended before it was done (the budget), or why it has no figure."""


@dataclass(frozen=True)
class StageOutcome:
    stage: Stage
    rows: tuple[Measured, ...]
    best: Config | None
    """None when no candidate got a figure."""

    @property
    def ties(self) -> tuple[Config, ...]:
        """The candidates tied with the best, the best-measured first."""
        tied = [m for m in self.rows if m.tied and m.config != self.best and m.value is not None]
        return tuple(m.config for m in sorted(tied, key=lambda m: -(m.value or 0.0)))


@dataclass(frozen=True)
class Figures:
    """What the caller measured of a candidate beside its objective."""

    rounds: int = 0
    cpu_ms_per_req: float | None = None
    rss_mb: float | None = None
    cut_short: str | None = None


class ClassSearch:
    """The stages of one worker class: the workers ladder, the threads ladder, refinements."""

    def __init__(self, space: ClassSpace, bounds: Bounds) -> None:
        self.space = space
        self.bounds = bounds
        self.max_workers = 1 if space.single_process else bounds.max_workers
        self.measured: set[Config] = set()
        self.refines = 0
        self._threads_done = not space.threaded or space.single_process or self.max_workers == 1

    def first(self) -> Stage:
        space = self.space
        if space.threaded and self.max_workers == 1:
            configs = tuple(space.config(1, t) for t in ladder(self.bounds.max_threads))
        else:
            start = min(START_THREADS, self.bounds.max_threads)
            configs = tuple(space.config(w, start) for w in ladder(self.max_workers))
        name = "threads" if space.threaded and self.max_workers == 1 else "workers"
        return self._stage(name, (), configs)

    def next(self, outcome: StageOutcome, mb_per_process: float | None = None) -> Stage | None:
        """The stage after `outcome`, or None when the search is done. A measured memory per
        process lowers the workers bound for the candidates still to come."""
        best = outcome.best
        if best is None:
            return None
        if mb_per_process is not None and mb_per_process > 0:
            live = max(1, len(outcome.stage.configs))
            self.max_workers = min(self.max_workers,
                                   bounds_for(self.bounds.cpus, self.bounds.available_mb, live,
                                              mb_per_process).max_workers)
        # Each carried candidate splits the stage's windows; ties left behind keep their own
        # stage's figures in the ranking, as the classes stage's do.
        carry = (best, *outcome.ties[:MAX_CARRIED_TIES])
        if not self._threads_done:
            self._threads_done = True
            threads = tuple(self.space.config(best.workers, t) for t in ladder(self.bounds.max_threads))
            stage = self._stage("threads", carry, threads)
            if stage.new:
                return stage
        if self.refines >= MAX_REFINE_STAGES:
            return None
        if any(m.config == best and m.cut_short is not None for m in outcome.rows):
            # The incumbent's own figure was cut short (its capacity search stopped by the
            # budget): midpoints around it would split a budget that could not resolve it.
            return None
        at_threads = {c.workers for c in self.measured if c.threads == best.threads}
        at_workers = {c.threads for c in self.measured if c.workers == best.workers}
        new = [self.space.config(w, best.threads) for w in refine_points(at_threads, best.workers, self.max_workers)]
        if self.space.threaded:
            new += [self.space.config(best.workers, t)
                    for t in refine_points(at_workers, best.threads, self.bounds.max_threads)]
        self.refines += 1
        stage = self._stage(f"refine {self.refines}", carry, tuple(new))
        return stage if stage.new else None

    def _stage(self, name: str, carry: Sequence[Config], configs: Sequence[Config]) -> Stage:
        new = tuple(c for c in dict.fromkeys(configs) if c not in self.measured and c not in carry)
        self.measured.update(new)
        return Stage(name, tuple(dict.fromkeys((*carry, *new))), new)

    def estimate_left(self) -> int:
        """Candidate windows still to come in this class, roughly: the budget's weights."""
        threads = 0 if self._threads_done else len(ladder(self.bounds.max_threads)) + 1
        rungs = ladder(self.max_workers)
        gaps = self.space.threaded or any(b - a > 1 for a, b in zip(rungs, rungs[1:]))
        return threads + ((MAX_REFINE_STAGES - self.refines) * 3 if gaps else 0)
