"""A seed page's throughput section: the seed's published throughput beside ours, per workload,
and the sentences its orderings make (agrees, tied here, differs), with the numbers as text the
pages share. The rest of a page (the seed's words, its other figures, CPU per request, the
section around them) is common.py's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from pywebbench.analyze.agreement import Estimate, Order, Verdict, published_order, to_baseline, verdict
from pywebbench.analyze.rows import Row, Summary
from pywebbench.plan.knob_values import knob_value
from pywebbench.plan.presets import Figure, Preset
from pywebbench.report.markdown import code, escape

THROUGHPUT = ("ratio", "rps", "requests", "requests_per_10s_max")
"""Published metrics that say how much a stack served, in the order a page prefers them."""


# --- numbers as text -------------------------------------------------------------------------


def ratio_text(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def rps_text(value: float | None) -> str:
    return "-" if value is None else f"{value:,.0f}"


def estimate_text(estimate: Estimate | None) -> str:
    if estimate is None:
        return "-"
    if estimate.low is None or estimate.high is None:
        return f"{estimate.value:.2f} (no interval)"
    return f"{estimate.value:.2f} [{estimate.low:.2f}, {estimate.high:.2f}]"


# --- the seed's throughput beside ours --------------------------------------------------------


Where = tuple[tuple[str, float], ...]


@dataclass(frozen=True)
class Published:
    """One stack's published throughput at one workload and point, as req/s and/or a ratio."""

    stack: str
    workload: str
    where: Where
    rps: float | None
    ratio: float | None
    note: str


def _rps_of(metrics: dict[str, Figure]) -> float | None:
    if "rps" in metrics:
        return metrics["rps"].value
    if "requests" in metrics and "duration_s" in metrics and metrics["duration_s"].value > 0:
        return metrics["requests"].value / metrics["duration_s"].value
    if "requests_per_10s_max" in metrics:
        return metrics["requests_per_10s_max"].value / 10.0
    return None


def published_throughput(preset: Preset, baseline: str) -> list[Published]:
    """Each published stack's req/s and its ratio to the baseline's published figure (same
    workload, same point; else the baseline's point-less figure, as seed 002 ran it once)."""
    groups: dict[tuple[str, str, Where], dict[str, Figure]] = defaultdict(dict)
    for figure in preset.published:
        groups[(figure.stack, figure.workload, figure.where)][figure.metric] = figure
    rps = {key: _rps_of(metrics) for key, metrics in groups.items()}
    found = []
    for (stack, workload, where), metrics in groups.items():
        if not any(m in metrics for m in THROUGHPUT):
            continue
        base = rps.get((baseline, workload, where), rps.get((baseline, workload, ())))
        own = rps[(stack, workload, where)]
        ratio = metrics["ratio"].value if "ratio" in metrics else (own / base if base and own is not None else None)
        note = next((f.note for f in metrics.values() if f.note), "")
        found.append(Published(stack, workload, where, own, ratio, note))
    return found


def _grid_knobs(preset: Preset) -> tuple[str, ...]:
    return tuple(name for name, _values in preset.grid)


def _cell_knob(row: Row, knob: str) -> float | None:
    value = knob_value(row.spec.cell, knob)  # the cell counts stack_cpus, as the grid names it
    return None if value is None else float(value)


def point_of_row(row: Row, preset: Preset) -> str:
    parts = [f"{k}={v:g}" for k in _grid_knobs(preset) if (v := _cell_knob(row, k)) is not None]
    return " ".join(parts) or "-"


def point_of(where: Where) -> str:
    return " ".join(f"{k}={v:g}" for k, v in where) or "-"


def _row_for(rows: Sequence[Row], stack: str, workload: str, where: Where) -> Row | None:
    return next((r for r in rows if r.label == stack and r.spec.workload == workload
                 and all(_cell_knob(r, k) == v for k, v in where)), None)


def base_for(row: Row, rows: Sequence[Row], baseline: str) -> Row | None:
    """The baseline's row in the same cell; else (a knob only the row's server takes) at the same
    workload and CPU count, compared unpaired."""
    same = [r for r in rows if r.label == baseline and r.spec.workload == row.spec.workload]
    return (next((r for r in same if r.spec.cell == row.spec.cell), None)
            or next((r for r in same if r.spec.cell.stack_cpus == row.spec.cell.stack_cpus), None))


@dataclass(frozen=True)
class Line:
    """One row of a throughput table: the seed's figure (if any) and ours (if measured)."""

    stack: str
    workload: str
    point: str
    published: Published | None
    row: Row | None
    estimate: Estimate | None
    verdict: Verdict | None
    """None for the baseline itself and for stacks the seed gave no ratio."""


def lines(preset: Preset, summary: Summary | None, baseline: str) -> list[Line]:
    """The seed's stacks in its order, then the stacks only we ran (a reference, a variant)."""
    rows = summary.rows if summary is not None else ()
    out: list[Line] = []
    used: set[int] = set()
    for pub in published_throughput(preset, baseline):
        row = _row_for(rows, pub.stack, pub.workload, pub.where)
        if row is not None:
            used.add(id(row))
        out.append(_line(pub.stack, pub.workload, point_of(pub.where), pub, row, rows, baseline, summary))
    for row in rows:
        if id(row) not in used and row.rps is not None:
            out.append(_line(row.label, row.spec.workload, point_of_row(row, preset), None, row, rows, baseline,
                             summary))
    return out


def _line(stack: str, workload: str, point: str, pub: Published | None, row: Row | None, rows: Sequence[Row],
          baseline: str, summary: Summary | None) -> Line:
    base = base_for(row, rows, baseline) if row is not None else None
    estimate = to_baseline(row, base) if row is not None and base is not None else None
    if stack == baseline or pub is None or pub.ratio is None:
        judged = None
    elif summary is None:
        judged = None
    elif estimate is None:
        judged = Verdict.NOT_MEASURED
    else:
        judged = verdict(published_order(pub.ratio), estimate.order)
    return Line(stack, workload, point, pub, row, estimate, judged)


def throughput_table(preset: Preset, summary: Summary | None, baseline: str, workload: str) -> str:
    selected = [line for line in lines(preset, summary, baseline) if line.workload == workload]
    measured = summary is not None
    seed_rps = any(line.published is not None and line.published.rps is not None for line in selected)
    head = ["Stack", *(["Point"] if preset.grid else []), *(["Seed req/s"] if seed_rps else []), "Seed ratio"]
    if any(line.published is not None and line.published.note for line in selected):
        head.append("Seed's note")
    if measured:
        head += ["Our req/s", f"Our ratio to {baseline} [95%]", "Tie", "Errors here", "Verdict"]
    out = ["| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for line in selected:
        pub = line.published
        cells = [code(line.stack), *([line.point] if preset.grid else []),
                 *([rps_text(pub.rps if pub else None)] if seed_rps else []), ratio_text(pub.ratio if pub else None)]
        if "Seed's note" in head:
            cells.append(escape(pub.note) if pub is not None and pub.note else "")
        if measured:
            row = line.row
            cells += [rps_text(row.rps if row else None), estimate_text(line.estimate),
                      str(row.tie_group) if row is not None and row.tie_group is not None else "-",
                      "-" if row is None else str(row.errors),
                      line.verdict.value if line.verdict is not None else "-"]
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out)


def _said(order: Order) -> str:
    return {Order.ABOVE: "above", Order.BELOW: "below", Order.TIED: "level with"}.get(order, "?")


def sentence(line: Line, baseline: str) -> str | None:
    """One sentence per stack the seed ranked against the baseline, made from the two figures."""
    if line.verdict is None or line.published is None or line.published.ratio is None:
        return None
    who = f"`{line.stack}`" + (f" ({line.point})" if line.point != "-" else "")
    seed = published_order(line.published.ratio)
    said = f"the seed puts {who} {_said(seed)} `{baseline}` ({line.published.ratio:.2f})"
    ours = estimate_text(line.estimate)
    if line.verdict is Verdict.NOT_MEASURED:
        return f"not measured: {said}; this run has no figure of {who} against it."
    if line.verdict is Verdict.UNRESOLVED:
        return f"unresolved: {said}; ours is {ours}, one window, so the noise is unknown."
    if line.verdict is Verdict.TIED:
        return f"tied here: {said}; ours cannot tell them apart ({ours})."
    order = line.estimate.order if line.estimate is not None else Order.UNRESOLVED
    if line.verdict is Verdict.AGREES:
        if seed is Order.TIED:
            return f"agrees: both put {who} level with `{baseline}` (seed {line.published.ratio:.2f}; ours tied, {ours})."
        return (f"agrees: both rank {who} {_said(seed)} `{baseline}`, ours outside the noise "
                f"(seed {line.published.ratio:.2f}; ours {ours}).")
    return f"differs: {said}; ours ranks it {_said(order)}, outside the noise ({ours})."


_COUNTED = {Verdict.AGREES: "agree", Verdict.TIED: "tied here", Verdict.DIFFERS: "differ",
            Verdict.UNRESOLVED: "unresolved", Verdict.NOT_MEASURED: "not measured"}


def tally(verdicts: Sequence[Verdict]) -> str:
    """'18 agree, 1 tied here, 1 differ'."""
    counts = {kind: sum(v is kind for v in verdicts) for kind in Verdict}
    parts = [f"{counts[kind]} {_COUNTED[kind]}" for kind in Verdict if counts[kind]]
    return ", ".join(parts) or "nothing to compare"


def sentences(preset: Preset, summary: Summary, baseline: str, workload: str) -> str:
    selected = [line for line in lines(preset, summary, baseline) if line.workload == workload]
    said = [s for line in selected if (s := sentence(line, baseline)) is not None]
    if not said:
        return ""
    judged = [line.verdict for line in selected if line.verdict is not None]
    return (f"Against `{baseline}`, stack by stack ({tally(judged)}):\n\n"
            + "\n".join(f"- {s}" for s in said))
