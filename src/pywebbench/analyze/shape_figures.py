"""A connection-shape row's own figures (issue 50): memory per idle connection, MB/s and CPU per
MB, the rate in the shape's unit and its p99, each with a 95% interval, and the connections held,
refused and closed. Read from the windows the row's other figures are made of.

Each figure's interval is Student's t over the stack's launch means (a launch's windows averaged
first, then t over those means): the rest of the harness treats a launch, not a window, as the
unit of replication, since windows of one server start share its state (an allocator that kept an
earlier window's memory, a warm cache). One launch gives no interval, and says so. A figure that
can only be positive (a rate, a p99, MB/s, CPU per MB) is taken on the log scale, its geometric
mean and an interval that stays above zero (three launches of a noisy p99 put the arithmetic
interval's low end below it); a memory difference, which may be negative, stays on its own scale.
"""

from __future__ import annotations

import math
import statistics
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from scipy.special import stdtrit

from pywebbench.catalog.workloads import WORKLOADS
from pywebbench.results.model import TrialResult

CONFIDENCE = 0.95
BYTES_PER_MB = 1_000_000
"""MB/s in decimal megabytes (10^6 bytes), as throughput is usually quoted."""


@dataclass(frozen=True)
class Figure:
    """The mean of a figure's launch means, and its interval (None with fewer than 2 launches)."""

    value: float
    interval: tuple[float, float] | None
    launches: int


@dataclass(frozen=True)
class ShapeRow:
    rate: Figure | None
    """The shape's units per second: req/s (idle's active requests, close), events/s, messages/s."""
    p99_ms: Figure | None
    """The shape's latency p99: the active requests', each event's delivery, each echo's round trip."""
    mb_s: Figure | None = None
    """Bytes moved per second, in MB (stream: read; upload: sent, requests x the body)."""
    cpu_s_per_mb: Figure | None = None
    """The app server's CPU seconds per MB moved."""
    rss_kb_per_connection: Figure | None = None
    """The server's RSS growth per idle connection (idle)."""
    socket_kb_per_connection: Figure | None = None
    """The kernel's TCP socket memory per idle connection, both ends (idle)."""
    asked: int | None = None
    held: int | None = None
    """The fewest connections held at a window's end, over the row's windows."""
    refused: int | None = None
    """The most refused in one window."""
    closed: int | None = None
    """The most closed by the server in one window."""


def t_interval(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """Student's t interval of the mean of `values`; None with fewer than 2."""
    if len(values) < 2:
        return None
    mean = statistics.fmean(values)
    half = float(stdtrit(len(values) - 1, 0.5 + confidence / 2)) * statistics.stdev(values) / math.sqrt(len(values))
    return (mean - half, mean + half)


def figure(windows: Sequence[TrialResult], value: Callable[[TrialResult], float | None], *,
           positive: bool = False) -> Figure | None:
    """A figure over the windows: each launch's mean of it, then their mean and t interval (for a
    `positive` figure whose launch means are all above zero, on the log scale)."""
    by_launch: dict[int, list[float]] = defaultdict(list)
    for trial in windows:
        if (v := value(trial)) is not None and math.isfinite(v):
            by_launch[trial.spec.launch or trial.spec.round].append(v)
    if not by_launch:
        return None
    means = [statistics.fmean(v) for _, v in sorted(by_launch.items())]
    if positive and all(m > 0 for m in means):
        logs = [math.log(m) for m in means]
        bounds = t_interval(logs)
        return Figure(math.exp(statistics.fmean(logs)),
                      (math.exp(bounds[0]), math.exp(bounds[1])) if bounds else None, len(means))
    return Figure(statistics.fmean(means), t_interval(means), len(means))


def _moved_mb(trial: TrialResult) -> float | None:
    """MB moved in the window by an HTTP generator's shape: an upload's requests x its body, else the
    bytes read; None for the Go driver's shapes (idle, sse, ws-echo), whose figures are counts."""
    workload = WORKLOADS.get(trial.spec.workload)
    if trial.load is None or workload is None or workload.shape is None or workload.shape.drive.command is not None:
        return None
    body = workload.shape.drive.body_bytes
    return (trial.load.requests * body if body else trial.load.bytes_read) / BYTES_PER_MB


def _mb_s(trial: TrialResult) -> float | None:
    moved = _moved_mb(trial)
    return moved / trial.load.duration_s if moved is not None and trial.load and trial.load.duration_s > 0 else None


def _cpu_per_mb(trial: TrialResult) -> float | None:
    moved, app = _moved_mb(trial), trial.usage("app")
    return app.cpu_s / moved if moved and app is not None else None


def is_shape(workload: str) -> bool:
    found = WORKLOADS.get(workload)
    return found is not None and found.shape is not None


def shape_row(windows: Sequence[TrialResult]) -> ShapeRow | None:
    """The figures of a shape workload's row from its measured windows; None for any other workload."""
    loaded = [t for t in windows if t.load is not None]
    if not loaded or not is_shape(loaded[0].spec.workload):
        return None
    shapes = [t.load.shape for t in loaded if t.load is not None and t.load.shape is not None]
    return ShapeRow(
        rate=figure(loaded, lambda t: t.load.rps if t.load else None, positive=True),
        p99_ms=figure(loaded, lambda t: t.load.latency.at(99.0) if t.load else None, positive=True),
        mb_s=figure(loaded, _mb_s, positive=True), cpu_s_per_mb=figure(loaded, _cpu_per_mb, positive=True),
        rss_kb_per_connection=figure(loaded, lambda t: t.load.shape.rss_per_connection_kb
                                     if t.load and t.load.shape else None),
        socket_kb_per_connection=figure(loaded, lambda t: t.load.shape.socket_kb_per_connection
                                        if t.load and t.load.shape else None),
        asked=max((s.asked for s in shapes), default=None), held=min((s.held for s in shapes), default=None),
        refused=max((s.refused for s in shapes), default=None), closed=max((s.closed for s in shapes), default=None),
    )
