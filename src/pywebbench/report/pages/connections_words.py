"""docs/connections.md's generated words: what each worker model did at each N of the idle run,
written from the rows' figures (never a claim the numbers do not carry), and the figures' text."""

from __future__ import annotations

from collections.abc import Sequence

from pywebbench.analyze.rows import Row
from pywebbench.analyze.shape_figures import Figure
from pywebbench.plan.knob_values import knob_value
from pywebbench.report.common import latency_format
from pywebbench.report.shape_columns import figure_text

MODELS = ("sync", "threaded", "greenlet", "event loop", "other")
"""The worker models in the page's order."""


def model_of(row: Row) -> str:
    """A stack's worker model as the catalog records it: threads per worker, else its concurrency."""
    concurrency = row.stack.concurrency.lower()
    if row.stack.threads > 1:
        return "threaded"
    if "greenlet" in concurrency:
        return "greenlet"
    if "coroutine" in concurrency:
        return "event loop"
    return "sync" if concurrency == "sync" else "other"


def span(figures: Sequence[Figure], spec: str, unit: str) -> str:
    """'2.1 ms' or '2.1-3.4 ms' over the stacks' values."""
    values = sorted(f.value for f in figures)
    if not values:
        return "not read"
    low, high = format(values[0], spec), format(values[-1], spec)
    return f"{low} {unit}" if low == high else f"{low}-{high} {unit}"


def _held(rows: Sequence[Row], asked: int) -> str:
    shapes = [r.shape for r in rows if r.shape is not None and r.shape.held is not None]
    if not shapes:
        return "no connection counts recorded"
    held = min(s.held or 0 for s in shapes)
    refused = max(s.refused or 0 for s in shapes)
    closed = max(s.closed or 0 for s in shapes)
    which = "" if len(shapes) == len(rows) else f" ({len(shapes)} of its {len(rows)} stacks measured)"
    if held >= asked:
        return f"held all {asked:,} idle connections{which}"
    lost = "; ".join(p for p in (f"up to {closed:,} closed by the server" if closed else "",
                                 f"up to {refused:,} refused" if refused else "") if p)
    return f"held as few as {held:,} of {asked:,} ({lost or 'the rest lost'}){which}"


def model_sentence(model: str, rows: Sequence[Row], asked: int) -> str:
    """One worker model at one N, from its stacks' rows: the valid ones' figures together, a stack
    whose windows were invalid on its own (its figures are not the model's)."""
    valid = [r for r in rows if r.valid]
    parts = []
    if valid:
        shapes = [r.shape for r in valid if r.shape is not None]
        rss = [f for s in shapes if (f := s.rss_kb_per_connection) is not None]
        p99 = [f for s in shapes if (f := s.p99_ms) is not None]
        labels = ", ".join(f"`{r.label}`" for r in valid)
        parts.append(f"{model.capitalize()} ({labels}): {_held(valid, asked)}; RSS per idle connection "
                     f"{span(rss, '.1f', 'KB')}; active p99 {_latencies(p99)}.")
    for row in rows:
        if not row.valid:
            own = row.shape.p99_ms if row.shape is not None else None
            failed = ", ".join(dict.fromkeys(c.split(":")[0] for c in row.checks)) or row.status
            parts.append(f"{model.capitalize() if not valid else 'Also'} `{row.label}`, its windows invalid "
                         f"({failed}): {_held([row], asked)}; active p99 {_latencies([own] if own else [])}.")
    return " ".join(parts)


def _latencies(figures: Sequence[Figure]) -> str:
    values = sorted(f.value for f in figures)
    if not values:
        return "not read"
    low, high = latency_format(values[0]), latency_format(values[-1])
    return f"{low} ms" if low == high else f"{low}-{high} ms"


def idle_paragraph(rows: Sequence[Row]) -> list[str]:
    """For each N of the idle run, a sentence per worker model."""
    lines: list[str] = []
    for asked in sorted({knob_value(r.spec, "connections") for r in rows}):
        at = [r for r in rows if knob_value(r.spec, "connections") == asked]
        lines.append(f"- **{asked:,} idle connections.** " + " ".join(
            model_sentence(model, mine, asked) for model in MODELS
            if (mine := [r for r in at if model_of(r) == model])))
    return lines


def cell(figure: Figure | None, spec: str) -> str:
    return figure_text(figure, spec).replace("|", "\\|")
