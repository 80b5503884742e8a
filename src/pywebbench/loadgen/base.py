"""The load generator interface: one request plan in, one LoadResult out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

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


class LoadGenerator(Protocol):
    name: str

    def version(self) -> str: ...

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult: ...


def taskset_prefix(cpus: tuple[int, ...]) -> list[str]:
    """Pin a child to CPUs; children inherit the mask, so the whole tree stays there."""
    if not cpus:
        return []
    return ["taskset", "--cpu-list", ",".join(str(c) for c in cpus)]
