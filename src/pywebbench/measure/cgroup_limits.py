"""The app server's own limits, as it would be deployed: a CFS quota and a memory limit written
on its role's cgroup before it starts, and the counters each window reads back.

Only the app server's role is limited; the generator and the services keep their CPUs and no
limit. The quota is CPU time per period, apart from (and combinable with) the CPUs it is pinned
to (--stack-cpus, taskset): 0.5 on 2 pinned CPUs lets it run on either for half of each period.

    cgroup v1  cpu hierarchy     cpu.cfs_period_us = 100000, cpu.cfs_quota_us = quota x period (-1: none)
               memory hierarchy  memory.limit_in_bytes (-1: none); memsw is left alone (see swap_note)
    cgroup v2  cpu.max "QUOTA PERIOD" ("max PERIOD": none); memory.max, and memory.swap.max 0

Read back per window (`read_counters`): cpu.stat's nr_periods, nr_throttled and throttled time
(v1 throttled_time in ns, v2 throttled_usec), and the kernel's OOM kills (v1 memory.oom_control's
oom_kill, Linux 4.13+, with memory.failcnt beside it; v2 memory.events' oom_kill). A role's
directories are its RoleCgroup's, so a test hands it a tree under tmp_path.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pywebbench.measure.cgroup_layout import CgroupError, CgroupVersion, _read, _write
from pywebbench.measure.cgroups import RoleCgroup
from pywebbench.results.server import ServerCgroup

CFS_PERIOD_US = 100_000
"""The period a quota is a share of: the kernel's default, 100 ms."""
SWAPS = Path("/proc/swaps")


@dataclass(frozen=True)
class ServerLimits:
    """What the app server's cgroup is limited to (None: unlimited)."""

    cpu_quota: float | None = None
    """CPUs of time per period: 0.5 is 50 ms of each 100 ms."""
    memory_limit: int | None = None
    """Bytes."""

    @property
    def unlimited(self) -> bool:
        return self.cpu_quota is None and self.memory_limit is None


def quota_us(cpus: float) -> int:
    """The quota in microseconds of each period (the kernel takes 1000 at least)."""
    return max(1000, round(cpus * CFS_PERIOD_US))


def apply_limits(role: RoleCgroup, limits: ServerLimits) -> None:
    """Write the limits on the role's cgroup (unlimited where None); CgroupError when a limit is
    asked and its controller is not there. Call it before the server starts or joins the role."""
    if limits.cpu_quota is not None and role.weight_dir is None:
        raise CgroupError(f"--cpu-quota needs the cpu controller, and role {role.name} has none here")
    if limits.memory_limit is not None and role.memory_dir is None:
        raise CgroupError(f"--memory-limit needs the memory controller, and role {role.name} has none here")
    v1 = role.version is CgroupVersion.V1
    if role.weight_dir is not None:
        cpu = role.weight_dir
        if v1:
            _write(cpu / "cpu.cfs_period_us", str(CFS_PERIOD_US))
            _write(cpu / "cpu.cfs_quota_us", str(quota_us(limits.cpu_quota)) if limits.cpu_quota else "-1")
        else:
            quota = str(quota_us(limits.cpu_quota)) if limits.cpu_quota else "max"
            _write(cpu / "cpu.max", f"{quota} {CFS_PERIOD_US}")
    if role.memory_dir is not None:
        memory = role.memory_dir
        if v1:
            _write(memory / "memory.limit_in_bytes", str(limits.memory_limit) if limits.memory_limit else "-1")
        else:
            _write(memory / "memory.max", str(limits.memory_limit) if limits.memory_limit else "max")
            swap = memory / "memory.swap.max"
            if swap.exists():  # absent when the kernel has no swap accounting: nothing to swap to
                _write(swap, "0" if limits.memory_limit else "max")


def swap_note(version: CgroupVersion, swaps: Path = SWAPS) -> str:
    """One sentence on what the memory limit bounds, swap included or not."""
    try:
        active = len(swaps.read_text().splitlines()) > 1  # a header, then one line per swap area
    except OSError:
        active = False
    if not active:
        return "no swap is on here: the memory limit bounds all of the server's memory"
    if version is CgroupVersion.V2:
        return "swap is on here, and the server's memory.swap.max is 0: the limit bounds all of its memory"
    return ("swap is on here, and cgroup v1's memory.limit_in_bytes bounds RAM alone: the server may swap past "
            "its limit (its swap is accounted in memory.memsw.usage_in_bytes)")


@dataclass(frozen=True)
class LimitCounters:
    """The role's cumulative counters at one moment (None: not readable here)."""

    periods: int | None = None
    throttled_periods: int | None = None
    throttled_ns: int | None = None
    oom_kills: int | None = None
    failcnt: int | None = None
    """v1 memory.failcnt (times usage hit the limit); v2 memory.events' max."""
    peak_over: str = "window"
    """What the role's memory peak spans after a reset (RoleCgroup.peak_over)."""


def keyed(data: bytes) -> dict[str, int]:
    """'key value' lines (cpu.stat, memory.events, memory.oom_control) as a dict."""
    found: dict[str, int] = {}
    for line in data.decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        try:
            found[key] = int(value)
        except ValueError:
            continue
    return found


def _keyed_file(path: Path) -> dict[str, int]:
    try:
        return keyed(_read(path))
    except OSError:
        return {}


def _number(path: Path) -> int | None:
    try:
        return int(_read(path))
    except (OSError, ValueError):
        return None


def read_counters(role: RoleCgroup) -> LimitCounters:
    """Throttling and OOM counters of the role now."""
    if role.version is CgroupVersion.V1:
        cpu = _keyed_file(role.weight_dir / "cpu.stat") if role.weight_dir is not None else {}
        memory = _keyed_file(role.memory_dir / "memory.oom_control") if role.memory_dir is not None else {}
        throttled = cpu.get("throttled_time")
        failcnt = _number(role.memory_dir / "memory.failcnt") if role.memory_dir is not None else None
    else:
        cpu = _keyed_file(role.cpu_dir / "cpu.stat")
        memory = _keyed_file(role.memory_dir / "memory.events") if role.memory_dir is not None else {}
        usec = cpu.get("throttled_usec")
        throttled = None if usec is None else usec * 1000
        failcnt = memory.get("max")
    return LimitCounters(cpu.get("nr_periods"), cpu.get("nr_throttled"), throttled, memory.get("oom_kill"), failcnt,
                         role.peak_over)


def _delta(after: int | None, before: int | None) -> int | None:
    return None if after is None or before is None else max(0, after - before)


def oom_kills(before: LimitCounters, after: LimitCounters, *, killed: bool) -> int:
    """OOM kills between two readings. Without v1's oom_kill line (before Linux 4.13), a process
    that died by SIGKILL (`killed`) while memory.failcnt rose counts as one."""
    counted = _delta(after.oom_kills, before.oom_kills)
    if counted is not None:
        return counted
    hits = _delta(after.failcnt, before.failcnt)
    return 1 if killed and hits else 0


def window_reading(before: LimitCounters, after: LimitCounters, peak_mb: float | None, oom: int) -> ServerCgroup:
    """The role over a window, as a trial records it (its peak as the accountant's window read it)."""
    throttled = _delta(after.throttled_ns, before.throttled_ns)
    return ServerCgroup(
        periods=_delta(after.periods, before.periods),
        throttled_periods=_delta(after.throttled_periods, before.throttled_periods),
        throttled_s=None if throttled is None else throttled / 1e9,
        peak_memory_mb=peak_mb,
        peak_over=after.peak_over,
        oom_kills=oom,
    )
