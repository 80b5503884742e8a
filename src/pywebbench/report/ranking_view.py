"""The sweep views: per stack, ratio and latency across the sweep; and where rankings flip.

For every workload of a sweep, each point of the grid ranks the stacks by req/s; each pair
of points is compared with Kendall's tau, the number of stack pairs that swap places, and
the pairs themselves (flagged when their intervals overlap, i.e. perhaps a tie).
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table

from pywebbench.analyze import Row, knob_values, point_text, summarize, varying_knobs
from pywebbench.ranking import FlipReport, Score, flip_report
from pywebbench.results.model import ResultSet


@dataclass(frozen=True)
class SweepView:
    workload: str
    knobs: tuple[str, ...]
    points: tuple[str, ...]
    """Point labels in sweep order."""
    rows: dict[str, dict[str, Row]]
    """stack label -> point label -> row."""
    flips: FlipReport[str]


def sweep_views(results: ResultSet) -> list[SweepView]:
    summary = summarize(results)
    by_workload: dict[str, list[Row]] = defaultdict(list)
    for row in summary.rows:
        by_workload[row.spec.workload].append(row)
    views = []
    for workload, rows in by_workload.items():
        knobs = varying_knobs(rows)
        if not knobs:
            continue
        ordered = sorted(rows, key=lambda r: tuple(repr(v) for v in _sort_key(r, knobs)))
        points = tuple(dict.fromkeys(point_text(r, knobs) for r in ordered))
        table: dict[str, dict[str, Row]] = defaultdict(dict)
        scores: dict[str, dict[str, Score]] = {p: {} for p in points}
        for row in ordered:
            point = point_text(row, knobs)
            table[row.label][point] = row
            if row.rps is not None:
                scores[point][row.label] = Score(row.rps, row.rps_ci)
        views.append(SweepView(workload, knobs, points, dict(table), flip_report(scores)))
    return views


def _sort_key(row: Row, knobs: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(float(v) if isinstance(v, (int, float)) else 0.0 for v in knob_values(row, knobs))


def render_ranking(results: ResultSet, width: int = 160) -> str:
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=False, color_system=None)
    views = sweep_views(results)
    if not views:
        console.print("no knob varies across this run's trials: nothing to rank across")
    for view in views:
        table = Table(title=f"{view.workload}: req/s (ratio to baseline) across {', '.join(view.knobs)}",
                      title_justify="left")
        table.add_column("Stack")
        for point in view.points:
            table.add_column(point, justify="right")
        for label, cells in sorted(view.rows.items()):
            values = []
            for point in view.points:
                row = cells.get(point)
                if row is None or row.rps is None:
                    values.append("-")
                else:
                    ratio = f" ({row.ratio:.2f})" if row.ratio is not None else ""
                    p99 = f" p99 {row.p99_ms:.0f}ms" if row.p99_ms is not None else ""
                    values.append(f"{row.rps:,.0f}{ratio}{p99}")
            table.add_row(label, *values)
        console.print(table)
        for ranking in view.flips.rankings:
            console.print(f"  ranking at {ranking.config}: " + " > ".join(ranking.order))
        for comparison in view.flips.comparisons:
            tau = "-" if comparison.tau is None else f"{comparison.tau:+.2f}"
            console.print(f"  {comparison.first}  vs  {comparison.second}: Kendall tau {tau}, "
                          f"{comparison.swaps} of {len(comparison.stacks) * (len(comparison.stacks) - 1) // 2} "
                          "stack pairs swap places")
            for flip in comparison.flips:
                noise = " (within noise)" if flip.within_noise else ""
                console.print(f"    {flip.ahead} {flip.ahead_first.value:,.0f} > {flip.behind} "
                              f"{flip.behind_first.value:,.0f}, then {flip.ahead_second.value:,.0f} < "
                              f"{flip.behind_second.value:,.0f}{noise}")
    return buffer.getvalue()
