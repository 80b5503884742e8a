"""What a preset is: the seed's setup, its sweep, and the figures it published."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple


OptionValue = str | int | float | bool | tuple[str, ...]
KnobValue = int | float
Grid = tuple[tuple[str, tuple[KnobValue, ...]], ...]

METRICS: Mapping[str, str] = MappingProxyType({
    "rps": "requests per second (analyze.Row.rps)",
    "ratio": "req/s relative to flask:gunicorn-sync in the same run (Row.ratio)",
    "min_ms": "fastest request, ms",
    "mean_ms": "mean latency, ms (Row.mean_ms)",
    "p50_ms": "median latency, ms (Row.p50_ms)",
    "p80_ms": "80th percentile, ms (Row.spectrum)",
    "p90_ms": "90th percentile, ms (Row.p90_ms)",
    "p95_ms": "95th percentile, ms (Row.p95_ms)",
    "p99_ms": "99th percentile, ms (Row.p99_ms)",
    "p999_ms": "99.9th percentile, ms (Row.p999_ms)",
    "max_ms": "slowest request, ms (Row.max_ms)",
    "db_sessions": "peak database server sessions (Row.db_sessions; seed 000's #DB)",
    "workers": "worker processes",
    "requests": "requests completed in one run",
    "duration_s": "measured seconds of one run",
    "requests_per_10s_min": "fewest requests in one 10 s run across the repeats (Row.rps_min x 10)",
    "requests_per_10s_max": "most requests in one 10 s run across the repeats (Row.rps_max x 10)",
})
"""Metric names a published figure may use, and where the measured counterpart lives."""


class Figure(NamedTuple):
    """One published number: (stack, metric, value) plus what it was measured under.

    `stack` is the report label: a catalog id, or `id#alias` for a preset variant.
    `where` names the grid point or variant, e.g. (("threads", 10),) or (("stack_cpus", 1),).
    """

    stack: str
    metric: str
    value: float
    workload: str
    where: tuple[tuple[str, KnobValue], ...] = ()
    note: str = ""
    """The seed's own words where its number is approximate ('1.2k', 'around 2 seconds')."""


class Claim(NamedTuple):
    """A ranking the seed's text states in words: every `higher` stack above every `lower` one.

    `level` claims say the opposite of an order: the stacks perform "comparably". Stacks are
    report labels as in Figure; `where` narrows both sides to a grid point (empty: every point
    the stacks were measured at). `quote` is the seed's own sentence, copied, so a page can show
    what was claimed and the reader can find it in the seed's text.
    """

    higher: tuple[str, ...]
    lower: tuple[str, ...]
    workload: str
    quote: str
    where: tuple[tuple[str, KnobValue], ...] = ()
    level: bool = False


@dataclass(frozen=True)
class Variant:
    """A stack run a second time with another DB driver / HTTP client, in the same run.

    The planner adds one session of `replace(stack, driver_override=driver)` serving only
    `workloads`, whose trials carry `alias`, so reports label it `stack#alias`.
    """

    stack: str
    driver: str
    workloads: tuple[str, ...]
    alias: str

    @property
    def label(self) -> str:
        return f"{self.stack}#{self.alias}"


@dataclass(frozen=True)
class Preset:
    name: str
    title: str
    description: str
    """How the seed's setup was scaled to this machine, what has no counterpart, what it reproduces."""
    seed: str
    """The seed document, e.g. '000_408dd1e51c29246c'."""
    options: Mapping[str, OptionValue]
    """RunOptions fields (or their flag names) -> values; flags and environment override them."""
    published: tuple[Figure, ...]
    published_from: str
    """The seed table / column / sentence the figures are copied from (or why there are none)."""
    grid: Grid = ()
    """(knob, values) axes swept as a cartesian product; knob names as in pywebbench.plan.sweep.

    A knob that a stack ignores does not multiply its trials: `threads` sweeps only stacks
    whose server is threaded; the others run once per point of the remaining axes.
    """
    aggregation: str = "median"
    """How repeats become one figure: median, best (seed 003) or mean (seed 004)."""
    workers_per_cpu: int | None = None
    """At each grid point, workers = this x the stack's CPU count (seed 004: CPUs x 3).

    Applies to multi-process Python servers only: single-process ones (Waitress, Flask's dev
    server) keep one process and the references (Go, nginx) their own; --workers overrides it.
    """
    workload_requests: tuple[tuple[str, int], ...] = ()
    """Request counts for fixed-count generators (ab) where the seed used one per workload;
    the run-wide `requests` option covers every other workload."""
    variants: tuple[Variant, ...] = ()
    claims: tuple[Claim, ...] = ()
    """Orderings the seed's text states in words (its figures are in `published`)."""

    @property
    def stacks(self) -> tuple[str, ...]:
        value = self.options["stacks"]
        return value if isinstance(value, tuple) else (str(value),)

    @property
    def workloads(self) -> tuple[str, ...]:
        value = self.options.get("workloads", ("hello",))
        return value if isinstance(value, tuple) else (str(value),)


def options_of(**values: OptionValue) -> Mapping[str, OptionValue]:
    return MappingProxyType(dict(values))
