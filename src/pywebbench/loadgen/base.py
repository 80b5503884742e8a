"""The load generator interface: one request plan in, one LoadResult out."""

from __future__ import annotations

import math
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pywebbench.catalog.protocols import Protocol as WireProtocol
from pywebbench.catalog.schedule import Schedule
from pywebbench.catalog.shapes.base import Drive
from pywebbench.catalog.workloads import HttpRequest
from pywebbench.results.model import LoadResult


class LoadGenError(Exception):
    """The generator itself failed (not the server under test)."""


@dataclass(frozen=True)
class LoadRequest:
    url: str
    connections: int
    duration_s: float
    cpus: tuple[int, ...] = ()
    requests: int | None = None
    timeout_s: float = 5.0
    keepalive: bool = True
    label: str = "load"
    rate: float | None = None
    """Open loop: requests per second sent on schedule whatever the server does; None = closed loop."""
    mix: tuple[HttpRequest, ...] = ()
    """A person's traffic mix, each request in proportion to its weight (wrk); () = GET `url`."""
    schedule: Schedule | None = None
    """Recorded arrivals (indexes into `mix`) sent at their own times, scaled to `rate` on average."""
    schedule_from_s: float = 0.0
    """Where in the recording this window starts (seconds at the log's own speed)."""
    drive: Drive | None = None
    """A connection shape's Go driver and its settings (catalog/shapes): sent by loadgen/shapes.py."""
    server_pids: tuple[int, ...] = ()
    """The server's root processes, for a driver that reads its memory (idle); () where none is read."""
    protocol: WireProtocol = WireProtocol.H1
    """What it speaks to the server: every protocol but h1 is sent by h2load (loadgen/h2load.py)."""


class LoadGenerator(Protocol):
    name: str

    def version(self) -> str: ...

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult: ...


def first_line_version(binary: str, flag: str = "--version") -> str:
    """A tool's version as the first line it prints for `flag`; 'missing' where it is not on PATH."""
    path = shutil.which(binary)
    if path is None:
        return "missing"
    done = subprocess.run([path, flag], capture_output=True, text=True, check=False)
    first = done.stdout.strip().splitlines()
    return first[0] if first else "unknown"


def taskset_prefix(cpus: tuple[int, ...]) -> list[str]:
    """Pin a child to CPUs; children inherit the mask, so the whole tree stays there."""
    if not cpus:
        return []
    return ["taskset", "--cpu-list", ",".join(str(c) for c in cpus)]


def weighted_cycle(weights: Sequence[int]) -> list[int]:
    """One cycle of a weighted mix, as indexes: each i `weights[i]` times (after dividing every
    weight by their greatest common divisor), in smooth weighted round-robin order."""
    if not weights or min(weights) < 1:
        raise ValueError(f"weights must be positive, got {list(weights)}")
    divisor = math.gcd(*weights)
    reduced = [w // divisor for w in weights]
    total = sum(reduced)
    current = [0] * len(reduced)
    order = []
    for _ in range(total):
        current = [c + w for c, w in zip(current, reduced)]
        pick = max(range(len(current)), key=lambda i: (current[i], -i))
        current[pick] -= total
        order.append(pick)
    return order
