"""Whether a row's interval is as narrow as --precision asks, and what the report says about it."""

from __future__ import annotations

from pathlib import Path

from pywebbench.analyze.rows import Row, Summary, summarize
from pywebbench.analyze.stats import half_width
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results


def row_half_width(row: Row) -> float | None:
    """How wide the row's figure is, ±fraction: its paired ratio to the baseline where it has
    one, else its req/s; 0 for the baseline itself under a paired method (1 by definition)."""
    if row.method.paired and row.ratio is not None:
        if row.ratio_ci == (1.0, 1.0):
            return 0.0
        return row.ratio_interval.half_width if row.ratio_interval is not None else None
    return half_width(row.rps_ci, row.rps)


def wide_rows(rows: tuple[Row, ...], precision: float) -> list[Row]:
    """Measured rows whose interval is wider than ±precision, or that have none yet."""
    return [r for r in rows if r.rps is not None
            and ((w := row_half_width(r)) is None or w > precision)]


def wide_labels(run_dir: Path, precision: float) -> set[str]:
    """Stacks (labels) of a run's results with an interval wider than ±precision, or none yet."""
    return {row.label for row in wide_rows(summarize(load_results(run_dir)).rows, precision)}


def precision_note(results: ResultSet, summary: Summary) -> str | None:
    precision = results.header.options.get("precision")
    if not precision:
        return None
    rows = [r for r in summary.rows if r.rps is not None]
    wide = wide_rows(summary.rows, float(precision))
    rounds = max((t.spec.round for t in results.trials), default=0)
    if not wide:
        return f"precision: every interval within ±{float(precision):.1%} after {rounds} rounds"
    return (f"precision: {len(wide)} of {len(rows)} intervals still wider than ±{float(precision):.1%} when the "
            f"run stopped after {rounds} rounds (its budget or round limit): {', '.join(sorted({r.label for r in wide}))}")
