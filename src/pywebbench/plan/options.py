"""Every knob of a run as one frozen value, and its checks; plan/sources.py layers it from the
config file, the environment and the flags."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from pywebbench.catalog.model import DB_KINDS, DRIVER_REQUIREMENTS
from pywebbench.catalog.protocols import parse_protocol
from pywebbench.core.errors import UserError, refusals
from pywebbench.plan.cpus import CpuSplit, default_split, parse_cpu_list
from pywebbench.plan.generators import CHOSEN_GENERATORS, GENERATOR_NAMES, Generator, Loop, default_generator
from pywebbench.plan.hosts import check_placement
from pywebbench.plan.interpreter_names import parse_python
from pywebbench.plan.pins import parse_pin
from pywebbench.plan.limits import cpu_quota_problem, memory_limit_problem
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import KnobSettings, Method
from pywebbench.results.server import AUTO_WORKERS

__all__ = ["CpuSplit", "default_split", "parse_cpu_list",  # their home is plan/cpus.py; said here for older imports
           "GENERATOR_NAMES"]  # and plan/generators.py

DEFAULT_ROUNDS = 6
"""Interleaved and duet: three launches of two rounds (an interval needs two launches; 3 x 2 is
0.8x as wide as 2 x 3 in simulation at 14 stacks)."""
AGGREGATIONS = ("median", "best", "mean")
METHODS = tuple(m.value for m in Method)
"""interleaved: live servers, short windows cycled in a fresh random order per round (the
default); duet: two stacks loaded at once on the same CPUs with equal CPU shares, every pair each
round up to five stacks, two cycles through them beyond (plan/duet_design.py);
restart: a server start, warmup and one window per trial (the seeds' own method); auto: duet or
interleaved, chosen for the run's workloads (plan/method_choice.py)."""
ALLOCATIONS = ("even", "adaptive")
TOPOLOGIES = ("direct", "nginx", "netns")
"""direct: the generator talks to the app server; nginx: through nginx as reverse proxy (seed 000)."""

# Seed 000's headline stacks plus one of each other server family: a few minutes on 2 cores.
DEFAULT_SUITE: tuple[str, ...] = (
    "flask:gunicorn-sync",
    "flask:gunicorn-gthread",
    "flask:gunicorn-gevent",
    "flask:gunicorn-meinheld",
    "flask:uwsgi",
    "falcon:gunicorn-sync",
    "bottle:bjoern",
    "starlette:uvicorn",
    "fastapi:uvicorn",
    "starlette:granian",
    "quart:hypercorn",
    "sanic:sanic",
    "aiohttp:aiohttp",
    "tornado:tornado",
)


@dataclass(frozen=True)
class ServiceSettings:
    """The options the backing services and the apps' PWB_* environment are made from.

    Only ever made by `RunOptions.services`, field for field from the options of the same
    name, so every default and every check lives once, on RunOptions; a sweep point's knob
    still wins per trial (services/backing.py).
    """

    max_db_sessions: int
    db_delay_s: float
    db_rows: int
    db_pool: int
    upstream_delay_s: float
    upstream_size: int
    cpu_size: int
    db: str


@dataclass(frozen=True)
class RunOptions:
    stacks: tuple[str, ...] = DEFAULT_SUITE
    workloads: tuple[str, ...] = ("hello",)
    connections: int = 100
    duration_s: float = 4.0
    warmup_s: float = 0.5
    workers: int | None = None
    """None: seed 000's rule per stack; AUTO_WORKERS (--workers auto): no flag, the server's own choice."""
    threads: int | None = None
    stack_cpus: tuple[int, ...] | None = None
    loadgen_cpus: tuple[int, ...] | None = None
    generator: Generator = field(default_factory=lambda: default_generator(Loop.CLOSED))
    """The generator that declared itself the closed-loop default (loadgen/wrk.py)."""
    requests: int | None = None
    repeats: int | None = None
    """Rounds to run before the stopping rule may stop (None: 1 for restart, DEFAULT_ROUNDS otherwise)."""
    keepalive: bool = True
    timeout_s: float = 5.0
    ready_timeout_s: float = 60.0
    seed: int | None = None
    out_dir: Path | None = None
    default_threads: int = field(default=10)
    # backing services and the workloads' knobs (seed 000's four knobs among them)
    max_db_sessions: int = 100
    db_delay_s: float = 0.02
    db_rows: int = 1_000_000
    db_pool: int = 0
    upstream_delay_s: float = 0.05
    upstream_size: int = 1024
    cpu_size: int = 100_000
    topology: str = "direct"
    hosts: str | None = None  # the --hosts inventory's path: roles on other hosts over SSH (plan/hosts.py)
    rtt_s: float | None = None  # the round trip added on every link between hosts (--rtt, sweepable)
    allow_remote: bool = False  # the inventory may name public addresses
    driver: str | None = None
    """Override every stack's DB driver (default: the right one for its concurrency model)."""
    db: str = "postgresql"
    """What /posts reads: postgresql, or sqlite (a file the harness fills with the same rows,
    seed 001's database). A string, so not a sweep knob (knobs are numbers): run twice."""
    # statistics and open loop
    aggregation: str = "median"
    """How repeats become one figure: median, best (seed 003) or mean (seed 004)."""
    precision: float | None = None
    """Keep adding rounds until every 95% interval's half-width is within this fraction."""
    max_rounds: int = 200
    """The round limit of the stopping rule (--precision); --budget usually binds first."""
    allocation: str = "even"
    """even: every stack in every round; adaptive: after the --repeats pilot, each launch measures
    only the stacks still wider than --precision (without one: not yet placed against both
    neighbours in the ranking), and the baseline (analyze/allocation.py)."""
    launch_block: int | None = None
    """Stacks a launch starts besides the baseline (None: every stack in every launch). The
    launches cycle through blocks drawn afresh each cycle, so the servers left idle on the stack
    CPUs are few (each costs a little CPU: 127 of them would shape every window) and every ratio is
    still paired with the baseline in its own rounds."""
    rate: float | None = None
    """Open loop: offered requests per second (oha, one process per kind of request of a mix);
    None = closed loop."""
    workers_per_cpu: int | None = None
    """Workers = this x the stack's CPUs for multi-process Python servers (seed 004: 3)."""
    workload_requests: tuple[tuple[str, int], ...] = ()
    """Per-workload request counts for ab, where a seed used one per workload."""
    method: Method = Method.INTERLEAVED
    settle_s: float = 0.25
    """Discarded load before each interleaved or duet window, so the window does not start
    on the previous stack's tail."""
    rounds_per_launch: int = 2
    """Rounds on one start of the servers. Few: a launch moved a ratio by 3-4% (sd) for its whole
    life, and an interval's degrees of freedom come from launches (Kalibera & Jones 2013)."""
    budget_s: float | None = None
    """Wall-time budget of the measuring: no round starts that would not finish inside it."""
    equivalence: float = 0.05
    """Neighbours in a ranking within ±this of each other are 'equivalent' (two one-sided tests)."""
    shards: int | None = None  # blocks of stacks measured at once, each on its own hosts (plan/shards.py)
    profile: bool = False
    """After the measured windows, one more window per stack and workload with py-spy on the
    server's processes (measure/profiled.py): where its CPU went, and what sampling cost."""
    profile_s: float | None = None
    """The profiled window's seconds; None: the measured windows' own. A function's share is read
    from the samples on the CPU (about 100 per busy core-second), so a small change needs more."""
    cpu_quota: float | None = None
    """The app server's CFS quota in CPUs (0.5: half a CPU's time), on its own cgroup; None: none."""
    memory_limit: int | None = None
    """The app server's memory limit in bytes, on its own cgroup (swap off for it); None: none."""
    python: str | None = None
    """The interpreter every stack's environment is built on (plan/interpreter_names.py: 3.12,
    3.14t, pypy3, a path); None: the one pywebbench runs on."""
    pin: str | None = None
    """One package's version or source in place of the catalog's pin, in every stack's environment
    (plan/pins.py); a stack that does not use it runs unchanged (measure/stack_env.py)."""
    protocol: str | None = None
    """The wire protocol to the app server (catalog/protocols.py): h1, h2c, h1-tls, h2-tls; None: h1,
    recorded as not asked for, as every run before the knob."""
    knobs: KnobSettings = ()
    """The knobs declared without a field of their own (plan/knob_declarations.py), by name: each
    set by its derived flag, config key or variable, or by a sweep point."""

    @property
    def services(self) -> ServiceSettings:
        """The services' view of these options."""
        return ServiceSettings(**{f.name: getattr(self, f.name) for f in fields(ServiceSettings)})

    @property
    def rounds(self) -> int:
        """Rounds before any stopping rule: --repeats, else the method's default."""
        if self.repeats is not None:
            return self.repeats
        # Asked before validate() too, where an unknown method gets the run's default.
        declared = strategy_of(self.method).default_rounds if self.method in METHODS else None
        return declared or DEFAULT_ROUNDS

    def __post_init__(self) -> None:
        # Flags, config files and presets spell the method as text; an unknown one is left as it
        # is for validate()'s one-line refusal.
        if not isinstance(self.method, Method) and self.method in METHODS:
            object.__setattr__(self, "method", Method(self.method))
        if not isinstance(self.generator, Generator) and self.generator in GENERATOR_NAMES:
            object.__setattr__(self, "generator", Generator(self.generator))

    def validate(self) -> RunOptions:
        """Self, or a UserError naming every bad option, one line each."""
        problems = list(dict.fromkeys(self.problems()))
        if problems:
            raise UserError("\n".join(problems))
        return self

    def problems(self) -> Iterator[str]:
        """What is wrong with these options, one line per problem."""
        # First: the method's and the generator's checks ask them what they support.
        known = True
        if self.method not in METHODS:
            known = False
            yield f"--method must be one of {', '.join(METHODS)}, got {self.method!r}"
        if self.generator not in GENERATOR_NAMES:
            known = False
            yield f"--generator must be one of {', '.join(CHOSEN_GENERATORS)}, got {self.generator!r}"
        yield from (f"{flag_of(name)} {problem}" for name, problem in self.number_problems())
        yield from self._choice_problems()
        if known:
            yield from self._method_problems()

    def number_problems(self) -> Iterator[tuple[str, str]]:
        """(field, what is wrong) for each number out of its own range, each field checked alone,
        so the config file's and the environment's readers (plan/sources.py) name each value as
        it was spelt there."""
        # nan passes every `<= 0` test below and inf would never end: refuse both first.
        infinite = {f.name for f in fields(self)
                    if isinstance(getattr(self, f.name), float) and not math.isfinite(getattr(self, f.name))}
        for name in sorted(infinite, key=list(_FIELDS).index):
            yield name, f"must be a finite number, got {getattr(self, name)}"
        positive = {"connections": self.connections, "duration_s": self.duration_s, "repeats": self.rounds,
                    "timeout_s": self.timeout_s, "ready_timeout_s": self.ready_timeout_s,
                    "workers": None if self.workers == AUTO_WORKERS else self.workers,
                    "threads": self.threads, "requests": self.requests, "max_db_sessions": self.max_db_sessions,
                    "db_rows": self.db_rows, "upstream_size": self.upstream_size, "cpu_size": self.cpu_size,
                    "rounds_per_launch": self.rounds_per_launch, "launch_block": self.launch_block,
                    "shards": self.shards, "rate": self.rate, "profile_s": self.profile_s}
        not_negative = {"warmup_s": self.warmup_s, "settle_s": self.settle_s, "db_pool": self.db_pool,
                        "db_delay_s": self.db_delay_s, "upstream_delay_s": self.upstream_delay_s}
        for name, value in positive.items():
            if name not in infinite and value is not None and value <= 0:
                yield name, f"must be positive, got {value}"
        for name, value in not_negative.items():
            if name not in infinite and value < 0:
                yield name, f"must be zero or positive, got {value}"
        if self.cpu_quota is not None and "cpu_quota" not in infinite and (why := cpu_quota_problem(self.cpu_quota)):
            yield "cpu_quota", why
        if self.memory_limit is not None and (why := memory_limit_problem(self.memory_limit)):
            yield "memory_limit", why
        if self.upstream_size > 0 and self.upstream_size < 12:
            yield "upstream_size", f"must be at least 12 bytes, got {self.upstream_size}"
        if self.budget_s is not None and "budget_s" not in infinite and self.budget_s <= 0:
            yield "budget_s", f"must be positive, got {self.budget_s:g}s"
        if self.precision is not None and "precision" not in infinite and not 0 < self.precision < 1:
            yield "precision", f"is a fraction such as 0.02, got {self.precision}"
        if "equivalence" not in infinite and not 0 < self.equivalence < 1:
            yield "equivalence", f"must be between 0% and 100%, got {self.equivalence:g}"

    def _choice_problems(self) -> Iterator[str]:
        # python's grammar here (which interpreter, where environments are built); what h2load cannot
        # send is plan/protocol_plan.py's, per point
        for value, read in ((self.python, parse_python), (self.pin, parse_pin), (self.protocol, parse_protocol)):
            if value is not None:
                yield from refusals(lambda: read(value))
        if self.driver is not None and self.driver not in DRIVER_REQUIREMENTS:
            yield f"--driver must be one of {', '.join(DRIVER_REQUIREMENTS)}, got {self.driver!r}"
        if self.db not in DB_KINDS:
            yield f"--db must be one of {', '.join(DB_KINDS)}, got {self.db!r}"
        if self.db == "sqlite" and {"db", "api"} & set(self.workloads):
            # So a stack's recorded driver is the one every DB workload of the run used.
            yield "--db sqlite is for the posts workload: db and api need PostgreSQL (pg_sleep, writes)"
        if self.topology not in TOPOLOGIES:
            yield f"--topology must be one of {', '.join(TOPOLOGIES)}, got {self.topology!r}"
        if self.aggregation not in AGGREGATIONS:
            yield f"--aggregation must be one of {', '.join(AGGREGATIONS)}, got {self.aggregation!r}"

    @property
    def placed(self) -> bool:
        """Roles on several hosts: an inventory, or the netns rig."""
        return self.hosts is not None or self.topology == "netns"

    def _method_problems(self) -> Iterator[str]:
        yield from refusals(lambda: check_placement(self))  # asks the method and the generator what they can do
        if self.max_rounds < self.rounds:
            yield f"--max-rounds ({self.max_rounds}) must be at least --repeats ({self.rounds})"
        if self.allocation not in ALLOCATIONS:
            yield f"--allocation must be one of {', '.join(ALLOCATIONS)}, got {self.allocation!r}"
        if self.allocation == "adaptive" and not self.method.allocates:
            yield ("--allocation adaptive starts each launch with only the stacks still open: it needs "
                   "--method interleaved")
        if self.allocation == "adaptive" and self.precision is None and self.budget_s is None:
            yield ("--allocation adaptive without --precision measures until every stack is placed "
                   "against both neighbours, which two equal stacks may never be: give it a --budget")
        if self.launch_block is not None and (not self.method.paired or self.allocation == "adaptive"):
            yield ("--launch-block cycles the launches of live servers through blocks of stacks: it needs "
                   "--method interleaved or duet, and --allocation even")
        if self.rate is not None and not self.generator.open_loop:
            yield (f"an open-loop --rate needs --generator {Generator.open_loop_names()} "
                   f"({self.generator} is closed-loop)")
        if self.profile_s is not None and not self.profile:
            yield "--profile-window is the length of --profile's window: add --profile, or drop it"
        if self.workers_per_cpu is not None and self.workers_per_cpu <= 0:
            yield f"workers_per_cpu must be positive, got {self.workers_per_cpu}"
        if any(count <= 0 for _, count in self.workload_requests):
            yield "workload request counts must be positive"
        if not self.stacks:
            yield "no stack selected"
        if not self.workloads:
            yield "no workload selected"

    def cpu_split(self, available: tuple[int, ...]) -> CpuSplit:
        base = default_split(available)
        split = CpuSplit(
            stack=self.stack_cpus if self.stack_cpus is not None else base.stack,
            loadgen=self.loadgen_cpus if self.loadgen_cpus is not None else base.loadgen,
        )
        unknown = (set(split.stack) | set(split.loadgen)) - set(available)
        if unknown:
            raise UserError(f"CPUs {sorted(unknown)} are not usable here (usable: {list(available)})")
        return split

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["out_dir"] = str(self.out_dir) if self.out_dir else None
        data["knobs"] = dict(self.knobs)  # an object, as the results file writes a trial's
        return data


_FIELDS = {f.name: f for f in fields(RunOptions)}
SPELLINGS = {name.removesuffix("_s"): name for name in _FIELDS if name.endswith("_s")}
"""A seconds field without its `_s`, as knobs spell it (`db_delay` for db_delay_s); the config file
and the environment take these besides every declared option's flag and field (plan/sources.py)."""


def flag_of(field: str) -> str:
    """The flag a RunOptions field is given by, as the checks name it: `--duration` for duration_s."""
    return "--" + field.removesuffix("_s").replace("_", "-")


def parse_duration(value: Any) -> float:
    """'10m', '90s', '1h', '1m30s' or a number of seconds -> seconds."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    text = str(value).strip().lower()
    units = {"h": 3600.0, "m": 60.0, "s": 1.0}
    total, number = 0.0, ""
    try:
        for ch in text:
            if ch.isdigit() or ch == ".":
                number += ch
            elif ch in units and number:
                total += float(number) * units[ch]
                number = ""
            else:
                raise ValueError(ch)
        if number:
            total += float(number)
    except ValueError:
        raise UserError(f"bad duration {value!r}: use a form like 10m, 90s or 1h30m") from None
    if not math.isfinite(total):
        raise UserError(f"bad duration {value!r}: must be a finite number of seconds")
    if total <= 0:
        raise UserError(f"bad duration {value!r}: must be positive")
    return total
