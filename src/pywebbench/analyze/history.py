"""The performance history in numbers: a finished run's rows as an entry, and the entries as one
series per row (stack, workload, setting, machine) over commits, with the steps found in each."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from enum import StrEnum

from pywebbench.analyze.changepoints import change_points
from pywebbench.analyze.rows import Row, summarize
from pywebbench.core.errors import UserError
from pywebbench.plan.knobs import knob_labels
from pywebbench.results.history import History, HistoryEntry, HistoryRow, Machine
from pywebbench.results.model import ResultSet


class Figure(StrEnum):
    RPS = "rps"
    RATIO = "ratio"
    P99 = "p99"
    CPU = "cpu"


@dataclass(frozen=True)
class FigureInfo:
    title: str
    unit: str
    format: str
    better_higher: bool
    """Whether a rise is an improvement (req/s, ratio) or a regression (p99, CPU per request)."""


FIGURES: dict[Figure, FigureInfo] = {
    Figure.RPS: FigureInfo("req/s", "requests per second", ",.0f", True),
    Figure.RATIO: FigureInfo("ratio to baseline", "req/s relative to the baseline stack", ".3f", True),
    Figure.P99: FigureInfo("p99 ms", "99th percentile latency (ms)", ",.1f", False),
    Figure.CPU: FigureInfo("CPU ms/req", "app CPU per request (ms)", ".3f", False),
}


@dataclass(frozen=True, order=True)
class SeriesKey:
    stack: str
    workload: str
    setting: str
    machine: str
    """The hardware (Machine.kind): figures from different hardware are different series."""


@dataclass(frozen=True)
class Point:
    commit: str
    branch: str
    run_dir: str
    value: float | None
    """None: the row was there but gave no figure (it failed, or has no baseline to divide by)."""
    interval: tuple[float, float] | None
    valid: bool | None = None
    """False: some window had errors, and the point is left out of the steps; None: not recorded."""

    @property
    def counted(self) -> bool:
        """Whether the point takes part in finding steps: a figure, and no window known to have failed."""
        return self.value is not None and self.valid is not False


@dataclass(frozen=True)
class Step:
    position: int
    """The series' first point at the new level."""
    commit: str
    before: float
    """Median of the level that ends here."""
    after: float
    """Median of the level that starts here."""

    @property
    def change(self) -> float:
        return self.after / self.before - 1 if self.before else 0.0


@dataclass(frozen=True)
class Series:
    key: SeriesKey
    points: tuple[Point, ...]
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class HistoryView:
    name: str
    figure: Figure
    entries: int
    machines: tuple[str, ...]
    series: tuple[Series, ...]

    @property
    def info(self) -> FigureInfo:
        return FIGURES[self.figure]


def setting_of(row: Row) -> str:
    """The row's knobs in words; its CPUs by count, as a cell compares them, not which ones."""
    cpus = len(row.spec.stack_cpus)
    given = [f"{cpus} stack CPU" + ("s" if cpus > 1 else "")] if cpus else []
    return ", ".join(knob_labels(row.spec, omit=("stack_cpus",)) + given)


def history_entry(results: ResultSet, run_dir: str, commit: str, branch: str, appended_at: str) -> HistoryEntry:
    """A finished run as one entry: the rows `report` prints, with the figures a history follows."""
    if not results.complete:
        raise UserError(f"run {run_dir} did not finish (no end record): finish it with --resume first")
    rows = summarize(results).rows
    if not rows:
        raise UserError(f"run {run_dir} has no rows to add")
    return HistoryEntry(commit, branch, results.header.created_at, appended_at, run_dir, results.header.run_id,
                        Machine.of(results.header.machine), tuple(_history_row(r) for r in rows))


def _history_row(row: Row) -> HistoryRow:
    return HistoryRow(row.label, row.spec.workload, setting_of(row), row.rps, row.rps_ci, row.ratio, row.ratio_ci,
                      row.p99_ms, row.cpu_ms_per_req, row.valid)


def _figure(row: HistoryRow, figure: Figure) -> tuple[float | None, tuple[float, float] | None]:
    if figure is Figure.RPS:
        return row.rps, row.rps_interval
    if figure is Figure.RATIO:
        return row.ratio, row.ratio_interval
    if figure is Figure.P99:
        return row.p99_ms, None
    return row.cpu_ms_per_req, None


def history_view(history: History, figure: Figure) -> HistoryView:
    """One series per row key, its points in append order, and where its level steps."""
    points: dict[SeriesKey, list[Point]] = {}
    for entry in history.entries:
        for row in entry.rows:
            key = SeriesKey(row.stack, row.workload, row.setting, entry.machine.kind)
            value, interval = _figure(row, figure)
            points.setdefault(key, []).append(Point(entry.commit, entry.branch, entry.run_dir, value, interval,
                                                    row.valid))
    series = tuple(Series(key, tuple(found), _steps(found)) for key, found in sorted(points.items()))
    machines = tuple(dict.fromkeys(e.machine.kind for e in history.entries))
    return HistoryView(history.path.name, figure, len(history.entries), machines, series)


def _steps(points: list[Point]) -> tuple[Step, ...]:
    """Change points of the counted points, placed back among all of them."""
    measured = [(i, p.value) for i, p in enumerate(points) if p.counted and p.value is not None]
    values = [v for _, v in measured]
    found = change_points(values)
    if not found:
        return ()
    bounds = (0, *found, len(values))
    levels = [statistics.median(values[a:b]) for a, b in zip(bounds, bounds[1:])]
    return tuple(Step(measured[at][0], points[measured[at][0]].commit, levels[n], levels[n + 1])
                 for n, at in enumerate(found))
