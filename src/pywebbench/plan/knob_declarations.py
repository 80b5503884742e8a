"""Every sweepable knob, each declared once: its `--knob` name, the RunOptions/TrialSpec field it
sets, its unit, how the sweep grammar reads it, its words in titles, its chart axis.

The places a knob shows up (the grammar in plan/sweep.py, the words and short forms in
plan/knobs.py, the CSV/JSON columns in report/record.py, the chart axes in
report/html_charts.py), its flag, config-file key and environment variable (plan/declared.py,
plan/sources.py) loop over `declared_knobs()` when they run, so a knob declared here (or
registered at run time, as tests/unit/test_recipes.py does) reaches all of them.

A new knob has no field of its own (`field=None`): its value lives by name in RunOptions.knobs
and TrialSpec.knobs (compared apart in Cell), and how it reaches the server is declared with it
(`applies=AppEnvironment("VAR")`). The knobs declared with a field (a RunOptions and TrialSpec
field each) keep it, so results files of earlier schemas load and mypy checks their uses; they
apply through their own code (the launchers, the services, the generators).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from enum import Enum
from typing import Any, ClassVar

from pywebbench.plan.limits import format_bytes
from pywebbench.plan.text_knobs import PIN, PROTOCOL, PYTHON, TextGrammar
from pywebbench.results.server import AUTO_WORKERS


class Kind(Enum):
    COUNT = "count"
    SECONDS = "seconds"
    RATE = "rate"
    CPUS = "cpus"
    """An amount of CPU time, in CPUs: 0.5 is half of one CPU's time."""
    BYTES = "bytes"
    """A size in bytes, written with K, M, G or T (binary)."""
    TEXT = "text"
    """A word read by the knob's own grammar (plan/text_knobs.py): an interpreter, a requirement."""


@dataclass(frozen=True)
class AppEnvironment:
    """A field-less knob applied as the app server's environment: VAR=value (plan/sessions.py adds it
    to the trials' app_env, which the launchers give the server). A new value is a new server start."""

    variable: str


Applies = AppEnvironment
"""How a field-less knob reaches what it changes (one kind so far: what can be tested for real)."""


class _Declared(type):
    """`for knob in Knob` walks the declared knobs, as it walked the enum they were before."""

    def __iter__(cls) -> Iterator[Knob]:
        return iter(declared_knobs())


@dataclass(frozen=True, eq=False, repr=False)
class Knob(metaclass=_Declared):
    """One sweepable knob. Compared by identity: each is declared once."""

    name: str
    """The `--knob` word, and the knob's name in labels' short form and its column."""
    field: str | None
    """The RunOptions field it overrides, and the TrialSpec field each window records it in; None:
    none of its own, its value is in RunOptions.knobs and TrialSpec.knobs by name."""
    kind: Kind
    words: Callable[[Any], str | None]
    """The value (never None) in words for titles and notes ("query delay 20 ms"); None: say nothing."""
    axis: str
    """The x axis title of the HTML report's chart against it, with its unit."""
    zero_allowed: bool = False
    loadgen_only: bool = False
    """True when changing it needs no server or service restart, only a new load run."""
    auto: bool = False
    """The word `auto` is a value (AUTO_WORKERS): the server chooses on its own."""
    unset: Any = None
    """The TrialSpec field's value when the knob is not set (what a chart's other points share)."""
    grammar: TextGrammar | None = None
    """A TEXT knob's reader (plan/text_knobs.py)."""
    applies: Applies | None = None
    """How a field-less knob's value is applied; a knob with a field applies through its own code."""

    CONNECTIONS: ClassVar[Knob]
    WORKERS: ClassVar[Knob]
    THREADS: ClassVar[Knob]
    MAX_DB_SESSIONS: ClassVar[Knob]
    DB_DELAY: ClassVar[Knob]
    UPSTREAM_DELAY: ClassVar[Knob]
    STACK_CPUS: ClassVar[Knob]
    RATE: ClassVar[Knob]
    DB_POOL: ClassVar[Knob]
    CPU_SIZE: ClassVar[Knob]
    RTT: ClassVar[Knob]
    CPU_QUOTA: ClassVar[Knob]
    MEMORY_LIMIT: ClassVar[Knob]
    PYTHON: ClassVar[Knob]
    PIN: ClassVar[Knob]
    PROTOCOL: ClassVar[Knob]

    @property
    def value(self) -> str:
        """The name, as the enum this replaced spelt it (`knob.value`)."""
        return self.name

    @property
    def key(self) -> str:
        """What a sweep point names it by: its field, or its name when it has none."""
        return self.field if self.field is not None else self.name

    def setting(self, spec: Any) -> Any:
        """Its value in a TrialSpec (or RunOptions): its field's, or its entry in `knobs` (unset: `unset`)."""
        if self.field is not None:
            return getattr(spec, self.field, None)
        return dict(getattr(spec, "knobs", ())).get(self.name, self.unset)

    def cleared(self, spec: Any) -> Any:
        """The spec with this knob unset: what the other points of its sweep share."""
        if self.field is not None:
            return replace(spec, **{self.field: self.unset})
        return replace(spec, knobs=tuple(p for p in spec.knobs if p[0] != self.name))

    @property
    def column(self) -> str:
        """Its CSV/JSON column: the name, `_ms` after a duration's, `_mb` after a size's (MiB)."""
        return {Kind.SECONDS: f"{self.name}_ms", Kind.BYTES: f"{self.name}_mb"}.get(self.kind, self.name)

    def axis_value(self, value: Any) -> Any:
        """The field's value on the chart's x axis, in the axis's unit; None: not on the axis."""
        if value is None or (self.auto and value == AUTO_WORKERS):  # auto: the count it chose is in the table
            return None
        if isinstance(value, tuple):  # CPU ids: their count
            return float(len(value)) if value else None
        if self.kind is Kind.SECONDS:
            return float(value * 1000.0)
        if self.kind is Kind.BYTES:
            return float(value * (1 / 2**20))
        if self.kind is Kind.COUNT:
            return float(value)
        return value  # a rate, CPUs, a word: as recorded

    def __repr__(self) -> str:
        return f"Knob({self.name})"


_REGISTRY: dict[str, Knob] = {}


def declared_knobs() -> tuple[Knob, ...]:
    """Every knob, in the order declared (the order of `known knobs` and of the JSON's columns)."""
    return tuple(_REGISTRY.values())


def register_knob(knob: Knob) -> Knob:
    """Declares a knob; its name and field must be new; a field-less one says how it applies."""
    clash = next((k for k in _REGISTRY.values() if knob.key in (k.key, k.name) or knob.name == k.name), None)
    if clash is not None:
        raise ValueError(f"knob {knob.name} ({knob.field}) is already declared as {clash.name} ({clash.field})")
    if (knob.kind is Kind.TEXT) != (knob.grammar is not None):
        raise ValueError(f"knob {knob.name}: a grammar is what reads a TEXT knob's values, and only those")
    if (knob.field is None) != (knob.applies is not None):
        raise ValueError(f"knob {knob.name}: a knob without a field says how it applies (applies=...), "
                         "and only those: a field's knob applies through its own code")
    _REGISTRY[knob.name] = knob
    return knob


def withdraw_knob(knob: Knob) -> None:
    """Undoes register_knob (a test's throwaway knob)."""
    if _REGISTRY.get(knob.name) is knob:
        del _REGISTRY[knob.name]


def declared_knob(name: str) -> Knob | None:
    """The knob declared as `name` (the registry is keyed by it)."""
    return _REGISTRY.get(name)


def knob_of_field(field: str) -> Knob | None:
    """The knob a sweep point's key names (its field, or a field-less knob's name)."""
    return next((k for k in _REGISTRY.values() if k.key == field), None)


def fieldless_knobs() -> tuple[Knob, ...]:
    """The declared knobs without a field of their own (their values in RunOptions.knobs)."""
    return tuple(k for k in _REGISTRY.values() if k.field is None)


def cpus_label(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus) or "all"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:g} ms"


def _workers(count: int) -> str:
    return "workers chosen by the server" if count == AUTO_WORKERS else f"{count} workers"


# Declared in the order the enum had them. Comments say why a knob is as it is.
Knob.CONNECTIONS = register_knob(Knob("connections", "connections", Kind.COUNT, lambda v: f"{v} connections",
                                      "connections", loadgen_only=True, unset=0))
Knob.WORKERS = register_knob(Knob("workers", "workers", Kind.COUNT, _workers, "workers", auto=True))
Knob.THREADS = register_knob(Knob("threads", "threads", Kind.COUNT, lambda v: f"{v} threads", "threads"))
Knob.MAX_DB_SESSIONS = register_knob(Knob("max_db_sessions", "max_db_sessions", Kind.COUNT,
                                          lambda v: f"max DB sessions {v}", "max DB sessions"))
Knob.DB_DELAY = register_knob(Knob("db_delay", "db_delay_s", Kind.SECONDS, lambda v: f"query delay {_ms(v)}",
                                   "query delay (ms)", zero_allowed=True))
Knob.UPSTREAM_DELAY = register_knob(Knob("upstream_delay", "upstream_delay_s", Kind.SECONDS,
                                         lambda v: f"upstream delay {_ms(v)}", "upstream delay (ms)",
                                         zero_allowed=True))
# A count of CPUs, not their ids: which CPUs is the caller's choice (it knows the machine).
Knob.STACK_CPUS = register_knob(Knob("stack_cpus", "stack_cpus", Kind.COUNT,
                                     lambda v: f"stack CPUs {cpus_label(v)}", "stack CPUs", unset=()))
Knob.RATE = register_knob(Knob("rate", "rate", Kind.RATE, lambda v: f"open loop at {v:,.0f} req/s",
                               "offered rate (req/s)", loadgen_only=True))
# 0 (no pool of the app's own) goes unsaid.
Knob.DB_POOL = register_knob(Knob("db_pool", "db_pool", Kind.COUNT, lambda v: f"app pool {v}" if v else None,
                                  "app DB pool", zero_allowed=True))
Knob.CPU_SIZE = register_knob(Knob("cpu_size", "cpu_size", Kind.COUNT, lambda v: f"sieve of {v:,}", "sieve size"))
# The round trip added on every link between hosts (--hosts, --topology netns).
Knob.RTT = register_knob(Knob("rtt", "rtt_s", Kind.SECONDS, lambda v: f"RTT +{_ms(v)} per link",
                              "added round trip (ms)", zero_allowed=True))
# The app server's own cgroup (measure/cgroup_limits.py); the generator and services keep none.
Knob.CPU_QUOTA = register_knob(Knob("cpu_quota", "cpu_quota", Kind.CPUS, lambda v: f"CPU quota {v:g}",
                                    "app server's CPU quota (CPUs)"))
Knob.MEMORY_LIMIT = register_knob(Knob("memory_limit", "memory_limit", Kind.BYTES,
                                       lambda v: f"memory limit {format_bytes(v)}", "app server's memory limit (MiB)"))
# Each value is another environment for every stack (stage/envs.py hashes the interpreter and pins).
Knob.PYTHON = register_knob(Knob("python", "python", Kind.TEXT, lambda v: f"Python {v}", "interpreter",
                                 grammar=PYTHON))
Knob.PIN = register_knob(Knob("pin", "pin", Kind.TEXT, lambda v: f"pin {v}", "pinned package", grammar=PIN))
# A new server start each value: TLS and its certificate are on the server's command line.
Knob.PROTOCOL = register_knob(Knob("protocol", "protocol", Kind.TEXT, lambda v: f"over {v}", "protocol",
                                   grammar=PROTOCOL))
