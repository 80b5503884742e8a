"""The app server as it was deployed for a run: under its own limits (--cpu-quota, --memory-limit)
and, with workers=auto, at the count it chose; what each window and launch record of it."""

from __future__ import annotations

from dataclasses import dataclass

AUTO_WORKERS = 0
"""`workers=auto` as the options, knobs and TrialSpec hold it: no worker flag, the server sizes
itself (StackInfo.sizing records what it chose). 0, since no server runs zero workers."""


@dataclass(frozen=True)
class WorkerSizing:
    """What a server started without a worker flag chose, beside the CPU counts it could size from."""

    workers: int
    """Its worker processes counted once it answered (the leaves of its process tree)."""
    host_cpus: int
    """os.cpu_count() on its host: what a server reading the CPU count sees, whatever its quota."""
    stack_cpus: int
    """The CPUs it was pinned to (--stack-cpus; all of the host's when unpinned)."""
    cpu_quota: float | None = None
    """The CPUs its --cpu-quota allowed (None: no quota)."""


@dataclass(frozen=True)
class ServerCgroup:
    """The app server's own cgroup over one window: how its CPU quota throttled it, its memory
    high-water mark and the kernel's OOM kills (every window on cgroups, quota or not)."""

    periods: int | None
    """CFS periods in which it ran (v1 and v2 cpu.stat nr_periods; 0 without a quota); None unread."""
    throttled_periods: int | None
    """Periods it was stopped at its quota (nr_throttled)."""
    throttled_s: float | None
    """Time it was stopped (v1 throttled_time, v2 throttled_usec)."""
    peak_memory_mb: float | None
    """The high-water mark of its memory (v1 memory.max_usage_in_bytes, v2 memory.peak)."""
    peak_over: str = "window"
    """What `peak_memory_mb` spans: "window" (reset before it), or "cgroup" (v2 before Linux 6.12:
    since the role's cgroup was made, at its first launch)."""
    oom_kills: int = 0
    """Processes of the server the kernel killed for its memory limit during the window."""
