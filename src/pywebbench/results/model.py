"""Frozen value types for everything a run records."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, NamedTuple

from pywebbench.results.load import Latency as Latency, LoadResult as LoadResult, SocketErrors as SocketErrors
from pywebbench.results.methods import MethodStrategy, strategy_of
from pywebbench.results.server import ServerCgroup, WorkerSizing

SCHEMA_VERSION = 7

KnobSetting = int | float | str
KnobSettings = tuple[tuple[str, KnobSetting], ...]
"""The settings of the knobs declared without a field of their own (plan/knob_declarations.py), by
knob name, in the order given: hashable, so a Cell holds them; the results file writes an object."""


def with_settings(settings: KnobSettings, given: Mapping[str, KnobSetting]) -> KnobSettings:
    """`settings` with `given` set over them, by knob name, the order kept."""
    return tuple({**dict(settings), **given}.items())

# The percentiles every generator reports; the spectrum keeps more points for later analysis.
HEADLINE_PERCENTILES: tuple[float, ...] = (50.0, 75.0, 80.0, 90.0, 95.0, 99.0, 99.9)


class TrialStatus(StrEnum):
    OK = "ok"
    INVALID_RESPONSE = "invalid-response"
    SERVER_FAILED = "server-failed"
    LOADGEN_FAILED = "loadgen-failed"
    SERVICE_FAILED = "service-failed"
    """A backing service or the proxy died during the window (the watchdog named and restarted it)."""
    SERVER_OOM = "server-oom"
    """The kernel killed a process of the server for going over its --memory-limit during the window."""
    UNAVAILABLE = "unavailable"


class Method(StrEnum):
    """How windows are placed, and what each placing supports (the checks and the statistics ask these)."""

    INTERLEAVED = "interleaved"
    """Every server of a launch live at once, short windows cycled in a fresh order each round."""
    DUET = "duet"
    """Two live stacks loaded at once on the same CPUs, each pair's ratio read side by side."""
    RESTART = "restart"
    """A server start, a warmup and one window per trial (the seeds' method)."""
    AUTO = "auto"
    """Duet or interleaved, chosen for the run before it plans (plan/method_choice.py); never a
    window's own method. Its answers below are those of both choices."""

    @property
    def strategy(self) -> MethodStrategy:
        """What this method can do (results/methods/): ask it, never compare against a member."""
        return strategy_of(self)

    @property
    def paired(self) -> bool:
        """Servers live across windows, each ratio paired with the baseline's in the same launch;
        restart compares separate starts (rows rank by req/s, not by ratio)."""
        return self.strategy.paired

    @property
    def loaded_at_once(self) -> int:
        """Stacks under load at the same moment."""
        return self.strategy.loaded_at_once

    @property
    def on_several_hosts(self) -> bool:
        """Placeable on --hosts or the netns rig (a duet needs both sides on one machine's CPUs;
        auto chooses interleaved there)."""
        return self.strategy.on_several_hosts

    @property
    def allocates(self) -> bool:
        """--allocation adaptive can choose which stacks a launch loads (auto chooses interleaved for it)."""
        return self.strategy.allocates

    @property
    def sizing_method(self) -> Method:
        """The method calibrate's sizing run measures in (restart's: interleaved)."""
        return Method(self.strategy.sized_in or self)


@dataclass(frozen=True)
class StackInfo:
    """The stack as it ran: the catalog entry plus the counts it was given."""

    id: str
    framework: str
    framework_title: str
    server: str
    server_title: str
    variant: str
    worker_class: str
    interface: str
    concurrency: str
    event_loop: str
    http_parser: str
    workers: int
    threads: int
    env_hash: str = ""
    argv: tuple[str, ...] = ()
    driver: str = ""
    """The DB client /posts used: PWB_DRIVER (the DB driver and HTTP client model) on
    PostgreSQL; sqlite3 or databases-aiosqlite on SQLite."""
    db: str = "postgresql"
    """What /posts read: postgresql or sqlite (--db)."""
    sizing: WorkerSizing | None = None
    """workers=auto: the count the server chose (then also `workers`) and the CPUs it could see."""
    interpreter: str | None = None
    """The interpreter its workers ran, read from /proc/PID/exe of a worker: 'CPython 3.11.7
    (/root/.pyenv/versions/3.11.7/bin/python3.11)'; None where not read (a native server, a remote host)."""
    gil: str | None = None
    """A free-threaded build's GIL as its workers reported it after the launch's checks: 'off', or
    'on' when an extension module turned it back on (not free-threaded then); None otherwise."""


class Cell(NamedTuple):
    """The settings two trials must share to be compared: a workload and its knobs."""

    workload: str
    connections: int
    workers: int | None
    threads: int | None
    topology: str
    max_db_sessions: int | None
    db_delay_s: float | None
    db_pool: int | None
    upstream_delay_s: float | None
    cpu_size: int | None
    stack_cpus: int
    """The count of CPUs given to the stack, not which ones."""
    rate: float | None
    rtt_s: float | None = None
    """The round trip added on each link between hosts (None: one host, no links)."""
    cpu_quota: float | None = None
    memory_limit: int | None = None
    python: str | None = None
    pin: str | None = None
    protocol: str | None = None
    knobs: KnobSettings = ()
    """The field-less knobs' settings (TrialSpec.knobs)."""


@dataclass(frozen=True)
class TrialSpec:
    """One planned measurement: a stack under one workload with one set of knobs."""

    trial_id: str
    stack_id: str
    workload: str
    connections: int
    duration_s: float
    warmup_s: float
    round: int
    generator: str
    workers: int | None = None
    """Workers asked for on the command line; None means each stack's default rule."""
    threads: int | None = None
    stack_cpus: tuple[int, ...] = ()
    loadgen_cpus: tuple[int, ...] = ()
    requests: int | None = None
    """Fixed request count, for generators such as ab that run to a count, not a clock."""
    topology: str = "direct"
    max_db_sessions: int | None = None
    db_delay_s: float | None = None
    db_pool: int | None = None
    upstream_delay_s: float | None = None
    cpu_size: int | None = None
    rate: float | None = None
    """Open-loop request rate (req/s); None for closed loop."""
    rtt_s: float | None = None
    """The round trip added on each link between hosts (--rtt); None on one host."""
    cpu_quota: float | None = None
    """The app server's CFS quota in CPUs (--cpu-quota); None: unlimited."""
    memory_limit: int | None = None
    """The app server's memory limit in bytes (--memory-limit); None: unlimited."""
    python: str | None = None
    """The interpreter asked for (--python, --knob python): '3.12', '3.14t', 'pypy3', a path; None:
    pywebbench's own. Which one ran is StackInfo.interpreter."""
    pin: str | None = None
    """A package's version or source put in place of the catalog's (--pin, --knob pin); what got
    installed is the environment record's freeze."""
    protocol: str | None = None
    """The wire protocol asked for (--protocol, --knob protocol): h1, h2c, h1-tls, h2-tls; None: not
    asked, HTTP/1.1 in the clear as every run before the knob (catalog/protocols.py)."""
    alias: str = ""
    """A second name for the same stack (calibrate's A/A and A/B runs), '' otherwise."""
    app_env: tuple[tuple[str, str], ...] = ()
    """Extra environment given to the app (calibrate's known slowdown, a knob that applies as one)."""
    knobs: KnobSettings = ()
    """The settings of the knobs declared without a field of their own, by name; () in results
    files written before them."""
    method: Method = Method.RESTART
    """How the window was placed (`Method`)."""
    launch: int = 0
    """Which start of the server this window measured (the outer level of the statistics);
    under the restart method every trial is its own launch."""
    settle_s: float = 0.0
    """Discarded load just before the window (interleaved and duet)."""
    partner: str = ""
    """Duet: the label of the stack loaded at the same time, '' otherwise."""
    slot: int = 0
    """Duet: 1 when this side's generator started first, 2 when second."""

    def __post_init__(self) -> None:
        if not isinstance(self.method, Method):  # spelt as text (a test, an older caller)
            object.__setattr__(self, "method", Method(self.method))

    @property
    def cell(self) -> Cell:
        """What must match for two trials to be compared (ratios, repeats)."""
        return Cell(self.workload, self.connections, self.workers, self.threads, self.topology,
                    self.max_db_sessions, self.db_delay_s, self.db_pool, self.upstream_delay_s, self.cpu_size,
                    len(self.stack_cpus), self.rate, self.rtt_s, self.cpu_quota, self.memory_limit, self.python,
                    self.pin, self.protocol, self.knobs)

    @property
    def label(self) -> str:
        """The stack as reports name it: its id, or its alias in a calibration run."""
        return f"{self.stack_id}#{self.alias}" if self.alias else self.stack_id


@dataclass(frozen=True)
class ResourceUsage:
    """CPU and memory of one process tree over a measured window."""

    role: str
    """app, loadgen, postgres, pgbouncer, nginx, upstream, or other (the rest of the machine)."""
    cpu_s: float
    peak_rss_mb: float
    processes: int
    window_s: float

    @property
    def cpu_percent(self) -> float:
        """Percent of one core, so 2 busy cores read 200."""
        return 100.0 * self.cpu_s / self.window_s if self.window_s > 0 else 0.0


@dataclass(frozen=True)
class TrialResult:
    spec: TrialSpec
    stack: StackInfo
    status: TrialStatus
    started_at: str
    finished_at: str
    load: LoadResult | None = None
    keepalive: bool | None = None
    error: str | None = None
    checks: tuple[str, ...] = ()
    """Failed validity checks, each 'name: what was seen'."""
    db_sessions: int | None = None
    """Peak server sessions pgbouncer held during the measured window (seed 000's #DB)."""
    resources: tuple[ResourceUsage, ...] = ()
    sampler_cpu_s: float | None = None
    """CPU the resource sampler itself used during the window: its cost, measured."""
    load_average: tuple[float, float, float] | None = None
    """The machine's load average just before the warmup."""
    cpu_source: str = "proc"
    """Where the CPU and memory figures came from: cgroup-v1, cgroup-v2 (the kernel's
    per-role accounting) or proc (the /proc sampler, where no cgroup could be made)."""
    steal_s: float | None = None
    """CPU time the hypervisor gave to other guests during the window, all CPUs (from /proc/stat)."""
    server_cgroup: ServerCgroup | None = None
    """The app server's cgroup over the window (None: no cgroup, or a server on another host)."""

    def usage(self, role: str) -> ResourceUsage | None:
        return next((r for r in self.resources if r.role == role), None)

    @property
    def valid(self) -> bool:
        """Seed 004's rule: a trial with any error or wrong response does not count."""
        return (self.status is TrialStatus.OK and self.load is not None and self.load.errors == 0
                and self.load.requests > 0)


@dataclass(frozen=True)
class MachineInfo:
    hostname: str
    cpu_model: str
    cpu_count: int
    affinity: tuple[int, ...]
    memory_mb: int
    kernel: str
    os: str
    python: str
    load_average: tuple[float, float, float]
    governor: str | None = None


@dataclass(frozen=True)
class EnvironmentRecord:
    """A stack environment built by uv: what was asked for and what got installed."""

    hash: str
    python: str
    requirements: tuple[str, ...]
    overrides: tuple[str, ...]
    freeze: tuple[str, ...]
    build_seconds: float = 0.0


@dataclass(frozen=True)
class RunHeader:
    run_id: str
    created_at: str
    pywebbench_version: str
    command: tuple[str, ...]
    options: dict[str, Any]
    machine: MachineInfo
    tools: dict[str, str]
    schema_version: int = SCHEMA_VERSION
    planned_trials: int = 0


@dataclass(frozen=True)
class ServiceRecord:
    """A backing service as it ran: version, the config we generated, measured limits."""

    name: str
    version: str
    config: dict[str, Any]


@dataclass(frozen=True)
class ProfileRecord:
    """The profiled window of one stack and workload (`--profile`): one more window of the same
    load after the measured ones, with py-spy on every process of the server. Its load is no
    measured window's: no statistic reads it, only its overhead against them."""

    spec: TrialSpec
    """The window as run: the measured windows' settings, its trial_id ending in `.profile`."""
    started_at: str
    """When its load began and ended (UTC, to the microsecond): after every measured window."""
    finished_at: str
    load: LoadResult | None = None
    unreadable: str | None = None
    """Why the sampler cannot read this stack (the Go reference, nginx, PyPy, a free-threaded build)."""
    error: str | None = None
    """Why the window or the sampler failed, one line."""
    sampler: str = ""
    """py-spy's version and how it sampled (rate, native frames)."""
    samples: int = 0
    """Samples on the CPU: what the split, the flame graph and the stacks hold."""
    idle_samples: int = 0
    """Samples of a worker waiting (select, epoll_wait, a lock: profile/split.WAITS), not counted."""
    sampler_errors: int = 0
    split: tuple[tuple[str, int], ...] = ()
    """Samples per category of profile/split.py (kernel, server, framework, app, rest), summing to `samples`."""
    measured_rps: float | None = None
    """The mean req/s of this stack's valid measured windows of the same cell, each alone on the
    CPUs (a duet's windows shared them: none then)."""
    overhead: float | None = None
    """The profiled window's req/s over measured_rps, minus 1 (-0.08: 8% slower while sampled)."""
    frames: tuple[str, ...] = ()
    """Each function as `name (short path)`, the frames `stacks` index into."""
    frame_categories: tuple[str, ...] = ()
    """Each frame's own category by its file ('' where no rule claims it): the flame graph's colours."""
    stacks: tuple[tuple[tuple[int, ...], int], ...] = ()
    """The samples by function, root first (frame indices, samples): the flame graphs and the
    differential of two versions are drawn from these, so a report needs only the results file."""
    files: tuple[str, ...] = ()
    """Its files under the run folder: py-spy's collapsed stacks, speedscope JSON, the flame graph SVG."""

    def __post_init__(self) -> None:
        # A file may come from anyone: a stack pointing past the frames is a bad record, said at load.
        if any(not 0 <= i < len(self.frames) for stack, _ in self.stacks for i in stack):
            raise ValueError("a profile's stack names a frame it does not hold")

    @property
    def label(self) -> str:
        return self.spec.label


@dataclass(frozen=True)
class ResultSet:
    header: RunHeader
    trials: tuple[TrialResult, ...]
    environments: dict[str, EnvironmentRecord] = field(default_factory=dict)
    complete: bool = False
    services: tuple[ServiceRecord, ...] = ()
    tuning: dict[str, Any] | None = None
    """A tuning run's answer as recorded (`analyze.tuning.Tuning`, unstructured); None otherwise."""
    profiles: tuple[ProfileRecord, ...] = ()
    """The profiled windows of a run with --profile, one per stack, workload and sweep point."""
