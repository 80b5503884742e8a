"""A generator that sends nothing: deterministic results for fast tests of everything else."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from pywebbench.loadgen.base import LoadRequest
from pywebbench.results.model import HEADLINE_PERCENTILES, Latency, LoadResult, SocketErrors


def synthetic_result(
    rps: float,
    duration_s: float,
    *,
    p50_ms: float = 10.0,
    socket_errors: SocketErrors = SocketErrors(),
    non_2xx: int = 0,
) -> LoadResult:
    """A result whose percentiles grow smoothly from p50, for renderers and stats tests."""
    spectrum = tuple((p, round(p50_ms * (1 + (p - 50) / 50), 3)) for p in HEADLINE_PERCENTILES)
    return LoadResult(
        generator="fake",
        requests=int(rps * duration_s),
        duration_s=duration_s,
        socket_errors=socket_errors,
        non_2xx=non_2xx,
        latency=Latency(mean_ms=p50_ms, stdev_ms=p50_ms / 10, max_ms=p50_ms * 3, percentiles=spectrum),
    )


@dataclass
class FakeLoadGenerator:
    """Answers each request with `respond(request)`; remembers every request it was given."""

    respond: Callable[[LoadRequest], LoadResult] = field(
        default=lambda request: synthetic_result(1000.0, request.duration_s)
    )
    name: str = "fake"
    requests: list[LoadRequest] = field(default_factory=list)

    def version(self) -> str:
        return "fake 1.0"

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        self.requests.append(request)
        return self.respond(request)
