"""The sweep views: per stack, ratio and latency across the sweep; and where rankings flip.

For every workload of a sweep, each point of the grid ranks the stacks by req/s; each pair
of points is compared with Kendall's tau, the number of stack pairs that swap places, and
the pairs themselves (flagged when their intervals overlap, i.e. perhaps a tie).
"""

from __future__ import annotations

import io
from collections import defaultdict
from dataclasses import dataclass

from rich.table import Table

from pywebbench.report.common import inert, plain_console

from pywebbench.analyze.rows import Row, summarize
from pywebbench.analyze.sweep_points import knob_values, point_text, varying_knobs
from pywebbench.analyze.ranking import FlipReport, Score, flip_report
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
    metric: str = "req/s"
    """What ranks the stacks: req/s (higher first), or p99 ms (lower first) in open loop,
    where every stack that keeps up achieves the same offered rate."""


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
        ordered = sorted(rows, key=lambda r: _sort_key(r, knobs))
        points = tuple(dict.fromkeys(point_text(r, knobs) for r in ordered))
        table: dict[str, dict[str, Row]] = defaultdict(dict)
        scores: dict[str, dict[str, Score]] = {p: {} for p in points}
        open_loop = "rate" in knobs
        for row in ordered:
            point = point_text(row, knobs)
            table[row.label][point] = row
            if open_loop and row.rate is not None and row.p99_ms is not None:
                scores[point][row.label] = Score(-row.p99_ms)  # negated: lower latency ranks first
            elif not open_loop and row.rps is not None:
                scores[point][row.label] = Score(row.rps, row.rps_ci, row.tie_group)
        scores = {p: v for p, v in scores.items() if v}
        views.append(SweepView(workload, knobs, points, dict(table), flip_report(scores),
                               "p99 ms" if open_loop else "req/s"))
    return views


def _sort_key(row: Row, knobs: tuple[str, ...]) -> tuple[float, ...]:
    return tuple(float(v) if isinstance(v, (int, float)) else 0.0 for v in knob_values(row, knobs))


def render_ranking(results: ResultSet, width: int = 160) -> str:
    buffer = io.StringIO()
    console = plain_console(buffer, width)
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
        console.print(f"  ranked by {view.metric}" + (" (lower first)" if view.metric != "req/s" else ""))
        for ranking in view.flips.rankings:
            console.print(f"  ranking at {ranking.config}: " + " > ".join(ranking.order))
        for comparison in view.flips.comparisons:
            tau = "-" if comparison.tau is None else f"{comparison.tau:+.2f}"
            console.print(f"  {comparison.first}  vs  {comparison.second}: Kendall tau {tau}, "
                          f"{comparison.swaps} of {len(comparison.stacks) * (len(comparison.stacks) - 1) // 2} "
                          "stack pairs swap places")
            for flip in comparison.flips:
                noise = " (within noise)" if flip.within_noise else ""
                console.print(f"    {flip.ahead} {abs(flip.ahead_first.value):,.0f} ahead of {flip.behind} "
                              f"{abs(flip.behind_first.value):,.0f}, then {abs(flip.ahead_second.value):,.0f} "
                              f"behind {abs(flip.behind_second.value):,.0f} {view.metric}{noise}")
    return inert(buffer.getvalue())
