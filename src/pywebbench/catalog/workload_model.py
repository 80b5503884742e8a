"""The types of a workload: what it needs, how its answer is checked, the requests it sends.

Apart from catalog/workloads.py (the built-in list) so a workload module of its own
(catalog/shapes/) can declare one without importing that list.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from pywebbench.catalog.schedule import Schedule
from pywebbench.catalog.shapes.base import Shape


class Needs(StrEnum):
    """Backing services a workload cannot run without."""

    DATABASE = "database"
    UPSTREAM = "upstream"
    NGINX = "nginx"


@dataclass(frozen=True)
class Expected:
    """What the harness knows for checking answers (filled from the running services)."""

    upstream_body: bytes | None = None
    template_body: bytes | None = None
    api_body: bytes | None = None
    posts_body: bytes | None = None
    static_body: bytes | None = None
    cpu_size: int = 100_000
    db_row: Callable[[int], str | None] | None = None


Check = Callable[[bytes, Expected], str | None]


@dataclass(frozen=True)
class HttpRequest:
    """One request of a person's traffic mix (`--request`), sent in proportion to its weight."""

    method: str
    path: str
    body: bytes = b""
    headers: tuple[tuple[str, str], ...] = ()
    weight: int = 1

    @property
    def label(self) -> str:
        return f"{self.method} {self.path}"


@dataclass(frozen=True)
class Workload:
    name: str
    path: str
    media_type: str
    description: str
    check: Check
    needs: frozenset[Needs] = field(default_factory=frozenset)
    io_bound: bool = False
    """Waits on a service: the overlap check applies to stacks that claim to be async."""
    nginx_only: bool = False
    """Served by nginx alone (the static baseline), not by the Python apps."""
    requests: tuple[HttpRequest, ...] = ()
    """A person's own traffic mix (the `app` command); () = GET `path`, as the built-in workloads."""
    expect_status: int = 200
    """The status every answer must have (`--expect`); media_type "" accepts any content type."""
    ignore_fields: tuple[str, ...] = ()
    """Where answers of a traffic mix may differ across servers (`--ignore-field`: JSON paths, headers)."""
    schedule: Schedule | None = None
    """A recorded log's arrivals (`app --replay`): each window sends them at their own times."""
    shape: Shape | None = None
    """A connection-shape workload (catalog/shapes/): who serves it, how it is checked and loaded."""
    knobs: tuple[str, ...] = ()
    """The sweep knobs (plan/sweep.Knob values) that change what its requests do, beyond those of every
    workload (connections, workers, ...): cpu_size for /cpu, db_delay for /db."""
