"""CPU and memory per role over one measured window: from cgroups where we can make them.

Every role (each live app server, PostgreSQL, pgbouncer, the upstream, each nginx) is put in
a cgroup of its own once it runs; its children inherit it, so a worker forked later is
counted too. A window is then two reads of a small file per role: no thread, no scan of
/proc, no sampling error. The load generator is a fresh child per window: its CPU is the
growth of this process's reaped-children time (RUSAGE_CHILDREN), exact as well.

Where no cgroup can be made (not root, no cgroup filesystem) the /proc sampler of
`pywebbench.measure.procsampler` does the same job with a thread, and the trial records which was used.
"""

from __future__ import annotations

import resource
import sys
import time
from pathlib import Path
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Protocol

import psutil

from pywebbench.measure.cgroup_limits import LimitCounters, ServerLimits, apply_limits, read_counters
from pywebbench.measure.cgroups import CgroupError, CgroupTree, RoleCgroup, detect
from pywebbench.measure.procsampler import OTHER, ResourceSampler
from pywebbench.measure.proctable import ProcessTable, busy_seconds, steal_seconds
from pywebbench.core.orphans import record_cgroups
from pywebbench.results.model import ResourceUsage

MIB = 1024 * 1024
PLACED_SOURCE = "proc over ssh"
"""The app's CPU read on its own host by its placement: its server's process group in /proc, at the window's edges."""
CGEXEC = Path(__file__).with_name("cgexec.py")
ENROLL_PASSES = 5
LOADGEN = "loadgen"
HARNESS = "harness"


@dataclass(frozen=True)
class GroupUsage:
    """A role's process group (or tree) as /proc on its host shows it: what a placement reads itself."""

    cpu_s: float
    """user + system of its live processes, plus what they reaped (so a worker that ended still counts)."""
    rss_mb: float
    processes: int


def usage_between(before: Mapping[str, GroupUsage], after: Mapping[str, GroupUsage],
                  window_s: float) -> tuple[ResourceUsage, ...]:
    """The placed roles' usage over a window, each read at both edges (RSS at its end, not a peak),
    the app's first; a role unread at either edge is left out (blank, not zero)."""
    roles = sorted(before.keys() & after.keys(), key=lambda role: (role != "app", role))
    return tuple(ResourceUsage(role, max(0.0, after[role].cpu_s - before[role].cpu_s), after[role].rss_mb,
                               after[role].processes, window_s) for role in roles)


def cpu_source(after: Mapping[str, GroupUsage], local: str) -> str:
    """Where the window's app CPU came from: its placement's read on its host, else this machine's accountant."""
    return PLACED_SOURCE if "app" in after else local


@dataclass
class WindowUsage:
    """Filled when the window closes."""

    usages: dict[str, ResourceUsage] = field(default_factory=dict)
    """Per role as enrolled, plus loadgen, harness and other."""
    sampler_cpu_s: float | None = None
    steal_s: float | None = None
    window_s: float = 0.0


class Accountant(Protocol):
    source: str

    def enroll(self, role: str, pids: Sequence[int]) -> None:
        """Count these processes and their descendants (now and later) as `role`."""

    def retire(self, role: str) -> None:
        """The role's processes are gone: stop reading it."""

    def launcher(self, role: str) -> list[str]:
        """An argv prefix that starts a command already inside the role ([] when there is none)."""

    def weigh(self, role: str, shares: int) -> None:
        """Give a role a relative CPU share (1024 = the default)."""

    def window(self, peak_of: Sequence[str] = ()) -> AbstractContextManager[WindowUsage]:
        """Measure every enrolled role while the block runs; peak memory for `peak_of`."""

    def confine(self, role: str, limits: ServerLimits) -> None:
        """Limit the role's cgroup before its processes start (CgroupError where it cannot)."""

    def counters(self, role: str) -> LimitCounters | None:
        """The role's throttling and OOM counters now (None without cgroups)."""


def _tree(pids: Sequence[int]) -> list[int]:
    found: list[int] = []
    for pid in pids:
        try:
            root = psutil.Process(pid)
            found += [root.pid, *(c.pid for c in root.children(recursive=True))]
        except psutil.Error:
            continue
    return found


def _children_cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _with_rest(usages: dict[str, ResourceUsage], window_s: float, busy_s: float, harness_s: float,
               loadgen_s: float) -> None:
    """Add the generator, the harness itself and "other": the machine's busy time minus every role."""
    usages[LOADGEN] = ResourceUsage(LOADGEN, loadgen_s, 0.0, 1, window_s)
    usages[HARNESS] = ResourceUsage(HARNESS, harness_s, 0.0, 1, window_s)
    counted = sum(u.cpu_s for u in usages.values())
    usages[OTHER] = ResourceUsage(OTHER, max(0.0, busy_s - counted), 0.0, 0, window_s)


class CgroupAccountant:
    def __init__(self, tree: CgroupTree) -> None:
        self.tree = tree
        self.source = tree.layout.version.value
        self._roles: dict[str, RoleCgroup] = {}
        self._confined: set[str] = set()

    def launcher(self, role: str) -> list[str]:
        """An argv prefix that starts a command inside the role's cgroups (see cgexec.py)."""
        group = self._roles.get(role) or self.tree.role(role)
        self._roles[role] = group
        return [sys.executable, "-I", "-S", str(CGEXEC), *(str(d / "cgroup.procs") for d in group.directories),
                "--"]

    def enroll(self, role: str, pids: Sequence[int]) -> None:
        """Move running processes in: until a listing of their trees finds none outside, so a
        worker forked while we moved its parent is caught on the next pass."""
        group = self._roles.get(role) or self.tree.role(role)
        self._roles[role] = group
        for _ in range(ENROLL_PASSES):
            inside = set(group.pids())
            missing = [pid for pid in _tree(pids) if pid not in inside]
            if not missing:
                break
            group.adopt(missing)

    def retire(self, role: str) -> None:
        self._roles.pop(role, None)

    def confine(self, role: str, limits: ServerLimits) -> None:
        """The role's quota and memory limit; a role once limited is set unlimited again when asked."""
        if limits.unlimited and role not in self._confined:
            return  # never limited: no write, so a run without limits needs no cpu or memory controller
        group = self._roles.get(role) or self.tree.role(role)
        self._roles[role] = group
        apply_limits(group, limits)
        if limits.unlimited:
            self._confined.discard(role)
        else:
            self._confined.add(role)

    def counters(self, role: str) -> LimitCounters | None:
        group = self._roles.get(role) or self.tree.roles.get(role)
        return None if group is None else read_counters(group)

    def weigh(self, role: str, shares: int) -> None:
        """Relative CPU share of a role (duet: equal shares for the two stacks)."""
        group = self._roles.get(role) or self.tree.role(role)
        self._roles[role] = group
        group.set_weight(shares)

    @contextmanager
    def window(self, peak_of: Sequence[str] = ()) -> Iterator[WindowUsage]:
        result = WindowUsage()
        roles = dict(self._roles)
        for name in peak_of:
            if name in roles:
                roles[name].reset_peak()
        before = {name: group.cpu_ns() for name, group in roles.items()}
        busy0, steal0 = busy_seconds(), steal_seconds()
        harness0, children0 = time.process_time(), _children_cpu_s()
        opened = time.monotonic()
        yield result
        after = {name: group.cpu_ns() for name, group in roles.items()}
        window_s = time.monotonic() - opened
        busy1, steal1 = busy_seconds(), steal_seconds()
        harness_s, loadgen_s = time.process_time() - harness0, _children_cpu_s() - children0
        for name, group in roles.items():
            peak = group.peak_memory_bytes() if name in peak_of else None
            result.usages[name] = ResourceUsage(name, max(0.0, (after[name] - before[name]) / 1e9),
                                                (peak or 0) / MIB, len(group.pids()), window_s)
        _with_rest(result.usages, window_s, busy1 - busy0, harness_s, loadgen_s)
        result.steal_s = None if steal0 is None or steal1 is None else max(0.0, steal1 - steal0)
        result.sampler_cpu_s = 0.0
        result.window_s = window_s


class ProcAccountant:
    """The /proc sampler, for machines where no cgroup could be made."""

    source = "proc"

    def __init__(self) -> None:
        self._roles: dict[str, tuple[int, ...]] = {}

    def enroll(self, role: str, pids: Sequence[int]) -> None:
        self._roles[role] = tuple(pids)

    def retire(self, role: str) -> None:
        self._roles.pop(role, None)

    def launcher(self, role: str) -> list[str]:
        return []

    def confine(self, role: str, limits: ServerLimits) -> None:
        if not limits.unlimited:
            raise CgroupError("--cpu-quota and --memory-limit need a cgroup for the server, and none could be made "
                              "here (CPU accounting fell back to the /proc sampler)")

    def counters(self, role: str) -> LimitCounters | None:
        return None

    def weigh(self, role: str, shares: int) -> None:
        """Without cgroups there is no group share; the kernel shares by thread."""

    @contextmanager
    def window(self, peak_of: Sequence[str] = ()) -> Iterator[WindowUsage]:
        result = WindowUsage()
        roles: Mapping[str, tuple[int, ...]] = dict(self._roles)
        steal0 = steal_seconds()
        harness0 = time.process_time()
        table = ProcessTable()
        with ResourceSampler(lambda: roles, table=table, generator_role=None) as sampler:
            children0 = _children_cpu_s()
            yield result
            loadgen_s = _children_cpu_s() - children0
        steal1 = steal_seconds()
        usages = {u.role: u for u in sampler.usages}
        other = usages.pop(OTHER)
        window_s = other.window_s
        busy_s = other.cpu_s + sum(u.cpu_s for u in usages.values())
        harness_s = time.process_time() - harness0
        result.usages = usages
        _with_rest(result.usages, window_s, busy_s, harness_s, loadgen_s)
        result.sampler_cpu_s = sampler.sampler_cpu_s
        result.steal_s = None if steal0 is None or steal1 is None else max(0.0, steal1 - steal0)
        result.window_s = window_s


def choose_accountant(stack: ExitStack, run_id: str, on_note: Callable[[str], None]) -> Accountant:
    """Per-role cgroups where this machine lets us make them, else the /proc sampler."""
    layout = detect()
    if layout is None:
        on_note("CPU accounting: /proc sampler (no cgroup could be made here: not root, or no cgroup filesystem)")
        return ProcAccountant()
    try:
        tree = stack.enter_context(CgroupTree(layout, run_id))
    except CgroupError as exc:
        on_note(f"CPU accounting: /proc sampler ({exc})")
        return ProcAccountant()
    record_cgroups(tree.directories())  # removed by the run's guard, or the next run, if this one is killed
    return CgroupAccountant(tree)
