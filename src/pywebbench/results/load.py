"""What a load generator measured over one window: requests, errors and latency (LoadResult),
the same type for every generator (loadgen/base.py). Re-exported by results/model.py."""

from __future__ import annotations

from dataclasses import dataclass

from pywebbench.results.shapes import ShapeFigures


@dataclass(frozen=True)
class SocketErrors:
    connect: int = 0
    read: int = 0
    write: int = 0
    timeout: int = 0

    @property
    def total(self) -> int:
        return self.connect + self.read + self.write + self.timeout


@dataclass(frozen=True)
class Latency:
    mean_ms: float
    stdev_ms: float
    max_ms: float
    percentiles: tuple[tuple[float, float], ...]
    """(percentile, milliseconds) pairs, ascending."""

    def at(self, percentile: float) -> float | None:
        for pct, value in self.percentiles:
            if abs(pct - percentile) < 1e-9:
                return value
        return None


@dataclass(frozen=True)
class LoadResult:
    generator: str
    requests: int
    duration_s: float
    socket_errors: SocketErrors
    non_2xx: int
    latency: Latency
    bytes_read: int = 0
    command: tuple[str, ...] = ()
    rate: float | None = None
    """Requested constant rate (open loop, req/s); None for a closed-loop run."""
    latency_uncorrected: Latency | None = None
    """Open loop only: latency from each request's actual send time, which hides stalls
    (coordinated omission); `latency` is then measured from the intended send time."""
    per_second: tuple[tuple[int, int, int, int], ...] = ()
    """A replayed log (loadgen/replay.py), each second of the window: requests the recording
    scheduled, requests offered (sent, or due while every connection was busy), answers received,
    requests that waited for a busy connection; () otherwise."""
    shape: ShapeFigures | None = None
    """A connection-shape window's connections, file limits and server memory (loadgen/shapes.py)."""

    @property
    def rps(self) -> float:
        return self.requests / self.duration_s if self.duration_s > 0 else 0.0

    @property
    def errors(self) -> int:
        return self.socket_errors.total + self.non_2xx
