"""Before anything starts: can this run limit its app servers as it asks (--cpu-quota,
--memory-limit, or their knobs)? One line per problem; the ranges and the quota against the stack's
CPUs are checked as the options and the plan are made (plan/limits.py, plan/sessions.py)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pywebbench.measure.cgroup_layout import CgroupLayout, CgroupVersion, detect
from pywebbench.results.model import TrialSpec


def limits_problems(trials: Sequence[TrialSpec], *, placed: bool,
                    layout_of: Callable[[], CgroupLayout | None] = detect) -> list[str]:
    """Why the plan's limits cannot be set here, one line each ([] when they can, or none is asked).

    `layout_of` is the machine's usable cgroup layout (measure/cgroup_layout.detect; a test's own)."""
    quota = any(t.cpu_quota is not None for t in trials)
    memory = any(t.memory_limit is not None for t in trials)
    if not quota and not memory:
        return []
    asked = " and ".join(f for f, on in (("--cpu-quota", quota), ("--memory-limit", memory)) if on)
    if placed:
        return [f"{asked} limit(s) the app server's cgroup on this machine; a server placed on another host "
                "(--hosts, --topology netns) runs outside it: drop them, or run on one host"]
    layout = layout_of()
    if layout is None:
        return [f"{asked} need(s) a cgroup for the app server, and none can be made here (not root, or no cgroup "
                "filesystem mounted)"]
    problems = []
    if quota and layout.weight_root is None:
        problems.append(f"--cpu-quota needs the cpu controller (cgroup v1's cpu hierarchy, or cpu enabled in cgroup "
                        f"v2): {_why(layout, 'CPU weights')}")
    if memory and layout.memory_root is None:
        problems.append(f"--memory-limit needs the memory controller (cgroup v1's memory hierarchy, or memory "
                        f"enabled in cgroup v2): {_why(layout, 'memory')}")
    return problems


def _why(layout: CgroupLayout, lost: str) -> str:
    """The layout's own reason the controller is missing, else the version found."""
    reason = next((why for why in layout.limits if lost in why), None)
    version = "v1" if layout.version is CgroupVersion.V1 else "v2"
    return reason or f"not available in this machine's cgroup {version} layout"
