"""workers=auto: what a server started without a worker flag chose, counted once it answers.

A server given no worker count sizes itself as it would deployed (Gunicorn and Uvicorn read
WEB_CONCURRENCY or take 1, others read the CPU count). In a container the CPU count it reads is
the host's, not its quota's (os.cpu_count() ignores cgroups): `sized_from_host` says when the
count it chose fits the host and not the CPUs it was given.
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable

import psutil

from pywebbench.results.server import WorkerSizing

SETTLE_S = 2.0
"""The longest wait for a master to finish forking its workers after the first one answered."""
STEP_S = 0.1
STEADY_READINGS = 3


def worker_processes(roots: tuple[int, ...]) -> int:
    """The leaves of the roots' process trees: a master's workers, or the one process that serves."""
    leaves = 0
    for pid in roots:
        try:
            procs = [psutil.Process(pid), *psutil.Process(pid).children(recursive=True)]
        except psutil.Error:
            continue
        for proc in procs:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE and not proc.children():
                    leaves += 1
            except psutil.Error:
                continue
    return leaves


def settled_count(count: Callable[[], int], *, wait_s: float = SETTLE_S, step_s: float = STEP_S) -> int:
    """The count once STEADY_READINGS readings in a row agree (or the last after `wait_s`)."""
    deadline = time.monotonic() + wait_s
    readings = [count()]
    while time.monotonic() < deadline and (len(readings) < STEADY_READINGS or len(set(readings[-STEADY_READINGS:])) > 1):
        time.sleep(step_s)
        readings.append(count())
    return readings[-1]


def sizing(roots: tuple[int, ...], stack_cpus: tuple[int, ...], cpu_quota: float | None) -> WorkerSizing:
    """The server's own choice, beside the host's CPU count and the CPUs it was given."""
    host = os.cpu_count() or 1
    return WorkerSizing(settled_count(lambda: worker_processes(roots)), host, len(stack_cpus) or host, cpu_quota)


def _counts_for(cpus: int) -> set[int]:
    """The counts servers derive from a CPU count: one per CPU, two, and Gunicorn's 2 x CPUs + 1."""
    return {cpus, 2 * cpus, 2 * cpus + 1}


def sized_from_host(chosen: WorkerSizing) -> str | None:
    """'5 workers for a 1-CPU quota (the host has 2 CPUs)' when the count fits the host's CPUs
    and not the CPUs it was given (its quota, else its pinning); None otherwise."""
    given = chosen.cpu_quota if chosen.cpu_quota is not None else float(chosen.stack_cpus)
    own = max(1, math.ceil(given))
    if own >= chosen.host_cpus or chosen.workers in _counts_for(own):
        return None
    if chosen.workers not in _counts_for(chosen.host_cpus):
        return None
    what = f"{given:g}-CPU quota" if chosen.cpu_quota is not None else f"{chosen.stack_cpus} pinned CPU(s)"
    return f"{chosen.workers} workers for a {what} (the host has {chosen.host_cpus} CPUs)"
