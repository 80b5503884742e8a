"""The command that deploys a configuration: the server's own argv builder, bound for a real host.

The one source of deploy commands: `run --tune`'s winners, `app`'s servers and `app --tune`'s
winners all come from here. The same builder made the command the harness measured, so the
deploy line differs from it only where a deployment must: the interpreter is `python` (or the
server's console script), the address is every interface on a fixed port, and no CPU pinning
or cgroup goes before it. A person's own app (a Framework with a `target`) is served as
`module:callable`, with each server's way of calling a factory.
"""

from __future__ import annotations

import math
import shlex

from pywebbench.catalog.model import LaunchSpec, Stack

DEPLOY_HOST = "0.0.0.0"
DEPLOY_PORT = 8000
CONSOLE_SCRIPTS = frozenset({"gunicorn", "uvicorn", "hypercorn", "granian"})
"""Servers whose `python -m NAME` is also installed as the command `NAME`."""


def deploy_argv(stack: Stack, workers: int, threads: int, *, module: str | None = None,
                host: str = DEPLOY_HOST, port: int = DEPLOY_PORT) -> tuple[str, ...]:
    """The server's command line for this many workers and threads; `module` replaces the
    catalog app's module. A framework with a target (`app`) keeps its target and factory.
    ValueError if the server cannot serve it (a reference server; a factory uWSGI cannot call)."""
    if stack.server.native is not None:
        raise ValueError(f"{stack.id} is a reference server, not deployed from a Python environment")
    framework = stack.framework
    argv = stack.server.build_argv(LaunchSpec("python", module or framework.module, host, port, workers, threads,
                                              target=framework.target, factory=framework.factory))
    if argv[:2] == ["python", "-m"] and len(argv) > 2 and argv[2] in CONSOLE_SCRIPTS:
        argv = argv[2:]
    return tuple(argv)


def deploy_command(stack: Stack, workers: int, threads: int, *, module: str | None = None,
                   host: str = DEPLOY_HOST, port: int = DEPLOY_PORT) -> str:
    return shlex.join(deploy_argv(stack, workers, threads, module=module, host=host, port=port))


MEMORY_HEADROOM = 0.25
"""Memory asked beyond the measured high-water mark: a window's peak is not a day's."""


def kubernetes_resources(cpu_quota: float, peak_mb: float | None) -> str:
    """The container's `resources:` block beside a deploy command, as it was measured: the CPU
    quota as requests and limits (Guaranteed QoS, so it gets what it had), memory from the
    server's high-water mark plus MEMORY_HEADROOM (none when no peak was read)."""
    cpu = f"{round(cpu_quota * 1000)}m"
    memory = f", memory: {math.ceil(peak_mb * (1 + MEMORY_HEADROOM))}Mi" if peak_mb else ""
    why = (f"  # measured under a {cpu_quota:g}-CPU quota"
           + (f"; memory: its {peak_mb:.0f} MiB high-water mark + {MEMORY_HEADROOM:.0%}" if peak_mb else ""))
    return "\n".join(("resources:" + why, f"  requests: {{cpu: {cpu}{memory}}}", f"  limits: {{cpu: {cpu}{memory}}}"))


def pods_needed(target_rate: float, capacity: float, bracket: tuple[float, float] | None) -> str:
    """'3 pods for 1,000 req/s at 400 req/s each (its bracket [380, 420): 3 to 3)': ceil(R / capacity),
    and the same at both ends of the capacity's search bracket."""
    pods = math.ceil(target_rate / capacity)
    text = f"{pods} pod(s) for {target_rate:,.0f} req/s at {capacity:,.0f} req/s each"
    if bracket is None or bracket[0] <= 0:
        return text
    low, high = bracket
    return (f"{text} (its bracket [{low:,.0f}, {high:,.0f}): {math.ceil(target_rate / high)} to "
            f"{math.ceil(target_rate / low)})")
