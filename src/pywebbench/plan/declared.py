"""Every option of a run, declared once: its flag, how its value is read, its help (the default
read from RunOptions, never typed twice), and the commands that take it.

The parsers (commands/arguments.py), the flags handed to the option layers (commands/common.py, commands/app.py), the
config file's and environment's spellings and readings (sources.py) and docs/reference/run.md's option table
(scripts/docs) are made from OPTIONS. A new option is a RunOptions field and one line here.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any

from pywebbench.catalog.model import DB_KINDS
from pywebbench.core.errors import UserError
from pywebbench.plan.cpus import parse_cpu_list
from pywebbench.plan.options import (
    AGGREGATIONS,
    ALLOCATIONS,
    DEFAULT_ROUNDS,
    METHODS,
    TOPOLOGIES,
    RunOptions,
    parse_duration,
)
from pywebbench.plan.generators import CHOSEN_GENERATORS
from pywebbench.plan.limits import AUTO
from pywebbench.plan.knob_declarations import fieldless_knobs
from pywebbench.plan.refused_values import Refused as Refused, lenient, take_refused as take_refused
from pywebbench.plan.sweep import Knob, KnobValue, parse_values
from pywebbench.results.server import AUTO_WORKERS


class Command(StrEnum):
    RUN = "run"
    SWEEP = "sweep"
    CALIBRATE = "calibrate"
    APP = "app"
    REPORT = "report"
    """Reads a finished run: it takes only the options of how a report looks (--wide)."""


RUN_LIKE = frozenset({Command.RUN, Command.SWEEP, Command.CALIBRATE})
EVERY = RUN_LIKE | {Command.APP}
"""The commands that run a benchmark."""


class Kind(StrEnum):
    VALUE = "value"
    APPEND = "append"
    """Repeatable: the values in order."""
    ON = "on"
    """A switch that sets True."""
    OFF = "off"
    """A switch that sets False (--no-keepalive)."""


# --- values read from the command line (argparse turns ValueError into its one-line error) ---


def positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def duration(text: str) -> float:
    try:
        return parse_duration(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def cpu_list(text: str) -> tuple[int, ...]:
    # A UserError raised here would escape parse_args as a traceback.
    try:
        return parse_cpu_list(text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def fraction(text: str) -> float:
    """`5%` or `0.05`: a fraction in (0, 1)."""
    try:
        value = float(text[:-1]) / 100 if text.endswith("%") else float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a percentage such as 5%") from None
    if not (math.isfinite(value) and 0 < value < 1):
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0% and 100%")
    return value


def rates(text: str) -> tuple[float, ...]:
    """Offered rates in req/s: one, or a list (500,1000,2000)."""
    try:
        values = tuple(float(v) for v in text.split(",") if v.strip())
    except ValueError:
        raise ValueError(f"not a rate list: {text!r}") from None
    if not values or not all(math.isfinite(v) and v > 0 for v in values):
        raise ValueError(f"rates must be positive: {text!r}")
    return values


def worker_count(text: str) -> int:
    """A positive count, or `auto` (AUTO_WORKERS): no worker flag, the server sizes itself."""
    if text.strip().lower() == AUTO:
        return AUTO_WORKERS
    return positive_int(text)


def _one(knob: Knob, text: str) -> KnobValue:
    """One value of a knob, read, checked and normalised as `--knob` reads it."""
    try:
        values = parse_values(knob, text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"{text!r} is one value (sweep with --knob {knob.value}=A,B)")
    return values[0]


def cpu_amount(text: str) -> float:
    """CPUs of time, such as 0.5 or 1.5."""
    return float(_one(Knob.CPU_QUOTA, text))


def byte_size(text: str) -> int:
    """256M, 1G, 512Mi (powers of 1024), or bytes."""
    return int(_one(Knob.MEMORY_LIMIT, text))


def python_value(text: str) -> str:
    return str(_one(Knob.PYTHON, text))


def pin_value(text: str) -> str:
    return str(_one(Knob.PIN, text))


def protocol_value(text: str) -> str:
    return str(_one(Knob.PROTOCOL, text))


def positive_rate(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a rate in req/s") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be a positive rate, got {text}")
    return value


def round_trip(text: str) -> float:
    try:
        values = parse_values(Knob.RTT, text)
    except UserError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    if len(values) != 1:
        raise argparse.ArgumentTypeError(f"{text!r} is one round trip such as 2ms (sweep with --knob rtt=0,2ms)")
    return float(values[0])


@dataclass(frozen=True)
class Option:
    field: str
    """The RunOptions field it sets (also the parsed namespace's attribute)."""
    flag: str
    help: str
    """What it does; `{default}` is replaced by the field's default."""
    parse: Callable[[str], Any] | None = None
    kind: Kind = Kind.VALUE
    metavar: str | None = None
    choices: Sequence[str] | None = None
    """Read when asked: the generators' are a live view of the registered ones (plan/generators.py)."""
    commands: frozenset[Command] = EVERY
    aliases: tuple[str, ...] = ()
    """Other spellings the parser accepts (app's --rounds for --repeats)."""
    by_command: bool = False
    """Parsed here, made into RunOptions by the command (a list of rates becomes a sweep), or read
    by the command alone (--wide), so not handed to the option layers as given."""

    @property
    def spellings(self) -> tuple[str, ...]:
        """Its flag and aliases as the config file and the environment (upper-case after
        PYWEBBENCH_) may spell them, besides its field (plan/sources.py)."""
        return tuple(f.removeprefix("--").replace("-", "_") for f in (self.flag, *self.aliases))

    def help_text(self) -> str:
        # Read only where the help names it: a by_command option may be no RunOptions field.
        return self.help.replace("{default}", default_text(self.field)) if "{default}" in self.help else self.help


_DEFAULTS = RunOptions()


def default_text(field: str) -> str:
    value = getattr(_DEFAULTS, field)
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, tuple):
        return ", ".join(map(str, value))
    return str(value)


O = Option
OPTIONS: tuple[Option, ...] = (
    O("stacks", "--stack", "stack to run (repeatable; globs allowed; PYWEBBENCH_STACK takes a comma-separated "
      "list)", kind=Kind.APPEND,
      metavar="FRAMEWORK:SERVER[-MODEL]", commands=RUN_LIKE),
    O("workloads", "--workload", "workload (repeatable; PYWEBBENCH_WORKLOAD takes a comma-separated list)",
      kind=Kind.APPEND, commands=RUN_LIKE),
    O("connections", "--connections", "concurrent connections ({default})", positive_int),
    O("duration_s", "--duration", "measured seconds per window ({default})", float),
    O("warmup_s", "--warmup", "discarded warmup seconds per server start ({default})", float),
    O("settle_s", "--settle", "discarded seconds of load before each interleaved or duet window ({default})", float),
    O("workers", "--workers", "worker processes (default: seed 000's rule); auto: no worker flag, the server "
      "sizes itself as it would deployed (the count it chose is recorded)", worker_count, metavar="N|auto"),
    O("threads", "--threads", "threads per worker for threaded servers", positive_int),
    O("stack_cpus", "--stack-cpus", "CPUs for the stack, e.g. 1-3", cpu_list),
    O("loadgen_cpus", "--loadgen-cpus", "CPUs for the load generator, e.g. 0", cpu_list),
    O("cpu_quota", "--cpu-quota", "the app server's CPU time as a CFS quota on its own cgroup, e.g. 0.5 (at most "
      "its --stack-cpus; sweepable: --knob cpu_quota=0.5,1)", cpu_amount, metavar="CPUS"),
    O("memory_limit", "--memory-limit", "the app server's memory limit on its own cgroup, swap off, e.g. 256M or "
      "1G (K/M/G in 1024s); going over it kills a process: the window fails as server-oom", byte_size,
      metavar="SIZE"),
    O("python", "--python", "the interpreter every stack runs on: a version (3.12, 3.14t: free-threaded), an "
      "implementation (pypy3) or a path; each stack's environment is built on it (sweepable: --knob "
      "python=3.11,3.13; `pywebbench python list` says what is found)", python_value, metavar="PYTHON"),
    O("pin", "--pin", "one package at another version or source in every stack's environment: NAME==VERSION, "
      "NAME@git+URL@REF or a local checkout (sweepable: --knob pin=gunicorn==22.0.0,gunicorn==23.0.0); a "
      "stack that does not use it runs unchanged (a note says so)", pin_value, metavar="REQUIREMENT"),
    O("protocol", "--protocol", "the protocol each window speaks to the app server: h1 (HTTP/1.1, the default), "
      "h2c (HTTP/2 in the clear, prior knowledge), h1-tls or h2-tls (TLS with a certificate made for the run); "
      "spoken by the app server itself, or under --topology nginx by nginx, which proxies HTTP/1.1 to the app; "
      "all but h1 are sent by h2load, closed loop; a stack that cannot serve it directly is left out with the "
      "reason (sweepable: --knob protocol=h1,h2c,h1-tls,h2-tls)", protocol_value,
      metavar="PROTOCOL"),
    O("generator", "--generator", "load generator ({default})", choices=CHOSEN_GENERATORS, commands=RUN_LIKE),
    O("requests", "--requests", "request count (ab)", positive_int, commands=RUN_LIKE),
    O("repeats", "--repeats", f"rounds before the stopping rule may stop ({DEFAULT_ROUNDS}; 1 with --method restart), "
      "each in a fresh random order", positive_int, aliases=("--rounds",)),
    O("rounds_per_launch", "--rounds-per-launch", "rounds on one start of the servers before they are started "
      "again ({default}; 1 where only that buys the launches an interval needs within --budget: 2, or 3 "
      "where a table has too few stacks to pool their spreads)", positive_int),
    O("aggregation", "--aggregation", "repeats into one figure: median ({default}), best (seed 003), mean (seed 004)",
      choices=AGGREGATIONS, commands=RUN_LIKE),
    O("precision", "--precision", "add rounds until every 95% interval of a ratio to the baseline is within this "
      "fraction, e.g. 0.02 (up to --budget and --max-rounds)", float),
    O("max_rounds", "--max-rounds", "round limit of the stopping rule ({default})", positive_int, commands=RUN_LIKE),
    O("allocation", "--allocation", "even ({default}): every stack in every round; adaptive (interleaved): after "
      "the --repeats pilot, each launch measures only the stacks still wider than --precision (without one, with "
      "a --budget: not yet different from or equivalent to both neighbours in the ranking), and the baseline",
      choices=ALLOCATIONS,
      commands=frozenset({Command.RUN, Command.SWEEP})),
    O("launch_block", "--launch-block", "start at most N stacks and the baseline per launch, the launches cycling "
      "through blocks: a random partition first, then runs of neighbours in the ranking so far, so adjacent "
      "stacks share launches (a run of many stacks: fewer idle servers beside each window)",
      positive_int, metavar="N", commands=frozenset({Command.RUN, Command.SWEEP})),
    O("shards", "--shards", "split the stacks into N blocks measured at once, each on its own hosts (a fleet "
      "--hosts file whose hosts name their shard, or a netns rig each), the baseline and two overlap stacks in "
      "every block; the report chains them with the hosts as a random effect", positive_int, metavar="N",
      commands=frozenset({Command.RUN})),
    O("budget_s", "--budget", "wall-time budget, e.g. 10m: kept to within one window; the plan says what it buys",
      duration),
    O("equivalence", "--equivalence", "ranking neighbours within ±PCT of each other are 'equivalent' (two "
      "one-sided tests; {default})", fraction, metavar="PCT"),
    O("method", "--method", "interleaved ({default}): live servers, short windows in a fresh random order per round, "
      "paired ratios; duet: two stacks at once on the same CPUs, every pair each round up to 5 stacks, each "
      "beside its neighbours and a random partner beyond (CPU-bound comparisons); "
      "restart: a server start, warmup and one window per trial (the seeds' method); "
      "auto: duet for the workloads that keep the stacks on the CPU, interleaved for those that wait on "
      "PostgreSQL or the upstream (one part after the other in one run)", choices=METHODS),
    O("timeout_s", "--timeout", "seconds before the generator gives up on a request ({default})", float),
    O("keepalive", "--no-keepalive", "close each connection after one request", kind=Kind.OFF, commands=RUN_LIKE),
    O("seed", "--seed", "seed of the random stack order", int),
    O("out_dir", "--out", "results directory (default runs/<time>)", Path),
    O("max_db_sessions", "--max-db-sessions", "pgbouncer's cap on server sessions ({default})", positive_int,
      commands=RUN_LIKE),
    O("db_delay_s", "--db-delay", "seconds of pg_sleep in /db ({default})", float, commands=RUN_LIKE),
    O("db_rows", "--db-rows", "rows loaded into the bench table ({default})", positive_int, commands=RUN_LIKE),
    O("db_pool", "--db-pool", "app-side pool size; 0 = a connection per request ({default})", int, commands=RUN_LIKE),
    O("upstream_delay_s", "--upstream-delay", "seconds the upstream API waits ({default})", float, commands=RUN_LIKE),
    O("upstream_size", "--upstream-size", "bytes of the upstream's answer ({default})", positive_int,
      commands=RUN_LIKE),
    O("cpu_size", "--cpu-size", "sieve size of /cpu ({default})", positive_int, commands=RUN_LIKE),
    O("topology", "--topology", "direct ({default}); nginx: load goes through nginx (which speaks --protocol and "
      "proxies HTTP/1.1); netns: generator, app and db each on a network namespace with its own sshd, made for "
      "the run", choices=TOPOLOGIES, commands=RUN_LIKE),
    O("hosts", "--hosts", "an inventory placing the roles on hosts over SSH", metavar="HOSTS_TOML",
      commands=RUN_LIKE),
    O("allow_remote", "--allow-remote", "the inventory may name public addresses", kind=Kind.ON, commands=RUN_LIKE),
    O("rate", "--rate", "open loop: the offered req/s of every window (oha; a mix of --request kinds "
      "split across oha processes at their weights' shares); a list (500,1000,2000) measures a latency-versus-offered-load "
      "curve (run, sweep); with --tune --slo, the first rate of each search", rates, metavar="REQ/S[,...]",
      commands=frozenset({Command.RUN, Command.SWEEP, Command.APP}), by_command=True),
    O("target_rate", "--target-rate", "with --tune --slo: the req/s a deployment must serve; each configuration "
      "offered to deploy says how many pods of its capacity serve it (and at its bracket's ends)", positive_rate,
      metavar="REQ/S", commands=frozenset({Command.RUN, Command.APP}), by_command=True),
    O("rtt_s", "--rtt", "round trip added on every link between hosts, e.g. 2ms (--hosts or --topology netns; "
      "sweepable: --knob rtt=0,2ms)", round_trip, commands=RUN_LIKE),
    O("db", "--db", "what /posts reads: postgresql ({default}) or a SQLite file filled with the same rows",
      choices=DB_KINDS, commands=RUN_LIKE),
    O("driver", "--driver", "force one DB driver on every stack (psycopg, psycopg2-gevent, psycopg2-eventlet, "
      "psycopg2-meinheld, asyncpg), e.g. a blocking one under gevent", commands=RUN_LIKE),
    O("profile", "--profile", "after the measured windows, one more window of the same load per stack and "
      "workload with py-spy on every process of the server: the CPU split (kernel and system calls, server, "
      "framework, app, rest), a flame graph and speedscope file per stack, and the sampling's overhead on "
      "req/s; that window never enters a measured figure", kind=Kind.ON,
      commands=frozenset({Command.RUN, Command.SWEEP, Command.APP})),
    O("profile_s", "--profile-window", "with --profile: the profiled window's length, e.g. 30s (default: "
      "--duration); about 100 samples per busy core-second, so a share change of 2 points needs thousands",
      duration, commands=frozenset({Command.RUN, Command.SWEEP, Command.APP})),
    O("wide", "--wide", "the terminal table with every column (type, workers, ties, latency, errors, ...), "
      "however wide; without it, the stack, req/s, ratio with its interval, verdict, CPU per request, memory and "
      "validity, fitted to the terminal", kind=Kind.ON, commands=EVERY | {Command.REPORT}, by_command=True),
)
"""Every option of a run, in the order `--help` lists them (the field-less knobs' follow: all_options)."""

KNOB_FIELD = "knobs."
"""A field-less knob's option sets `knobs.NAME`: its entry in RunOptions.knobs (plan/sources.py)."""


def knob_option(knob: Knob) -> Option:
    """The flag of a knob declared without a field, derived from its declaration: `--NAME`, its value
    read as one value of its sweep grammar, its help from its axis title."""
    applies = f"; sets {knob.applies.variable} in the app server's environment" if knob.applies else ""
    return Option(KNOB_FIELD + knob.name, "--" + knob.name.replace("_", "-"),
                  f"{knob.axis}{applies} (sweepable: --knob {knob.name}=A,B)",
                  lambda text: _one(knob, text), metavar=knob.kind.value.upper(), commands=RUN_LIKE)


def all_options() -> tuple[Option, ...]:
    """OPTIONS and one per field-less knob declared now (a knob registered later is read when asked)."""
    return OPTIONS + tuple(knob_option(k) for k in fieldless_knobs())


def declared(command: Command) -> Iterator[Option]:
    return (o for o in all_options() if command in o.commands)


def add_options(parser: argparse.ArgumentParser, command: Command) -> None:
    """The command's declared options on its parser, each setting its RunOptions field."""
    for option in declared(command):
        text = option.help_text().replace("%", "%%")  # argparse formats help with %
        flags = [option.flag, *option.aliases]
        if option.kind is Kind.APPEND:
            parser.add_argument(*flags, action="append", dest=option.field, metavar=option.metavar, help=text)
        elif option.kind is Kind.ON:
            parser.add_argument(*flags, action="store_true", dest=option.field, default=None, help=text)
        elif option.kind is Kind.OFF:
            parser.add_argument(*flags, action="store_const", const=False, dest=option.field, help=text)
        else:
            # choices are the reader's to check (_lenient), so argparse stops at no bad value
            metavar = option.metavar or ("{" + ",".join(option.choices) + "}" if option.choices else None)
            parser.add_argument(*flags, type=lenient(option.flag, option.parse or str, option.choices), dest=option.field, metavar=metavar, help=text)


def flags_of(args: argparse.Namespace, command: Command) -> dict[str, object]:
    """The parsed values of the command's options, by RunOptions field (None: not given)."""
    flags: dict[str, object] = {}
    for option in declared(command):
        if not option.by_command:
            value = getattr(args, option.field)
            flags[option.field] = tuple(value) if option.kind is Kind.APPEND and isinstance(value, list) else value
    return flags


def reference_table() -> str:
    """docs/reference/run.md's option table: every declared option, its commands and its help."""
    lines = ["| flag | commands | what it does |", "|---|---|---|"]
    for option in all_options():
        spelled = ", ".join(f"`{f}`" for f in (option.flag, *option.aliases))
        commands = "all" if option.commands == EVERY else ", ".join(sorted(option.commands))
        lines.append(f"| {spelled} | {commands} | {option.help_text()} |")
    return "\n".join(lines) + "\n"
