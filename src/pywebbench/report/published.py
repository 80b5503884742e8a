"""A preset's run next to the seed's published figures: measured here vs published there.

`pywebbench report DIR --format published` reads the preset's name from the results header
and puts every published figure of it beside the matching measured one (same stack label,
workload and grid point), as a Markdown table for the README.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable

from pywebbench.analyze.rows import Row, summarize
from pywebbench.core.errors import UserError
from pywebbench.plan.knob_values import knob_value, window_seconds
from pywebbench.plan.presets import Figure, Preset, get_preset
from pywebbench.report.markdown import escape
from pywebbench.results.model import ResultSet

MEASURED: dict[str, Callable[[Row], float | None]] = {
    "rps": lambda r: r.rps,
    "ratio": lambda r: r.ratio,
    "mean_ms": lambda r: r.mean_ms,
    "p50_ms": lambda r: r.p50_ms,
    "p80_ms": lambda r: next((ms for p, ms in r.spectrum if abs(p - 80.0) < 1e-9), None),
    "p90_ms": lambda r: r.p90_ms,
    "p95_ms": lambda r: r.p95_ms,
    "p99_ms": lambda r: r.p99_ms,
    "p999_ms": lambda r: r.p999_ms,
    "max_ms": lambda r: r.max_ms,
    "min_ms": lambda r: next((ms for p, ms in r.spectrum if p == 0.0), None),
    "db_sessions": lambda r: None if r.db_sessions is None else float(r.db_sessions),
    "workers": lambda r: float(r.stack.workers),
    "requests": lambda r: r.requests / r.trials if r.trials else None,
    "duration_s": lambda r: window_seconds(r.spec),
    "requests_per_10s_min": lambda r: None if r.rps_min is None else r.rps_min * 10,
    "requests_per_10s_max": lambda r: None if r.rps_max is None else r.rps_max * 10,
}


def _matches(row: Row, figure: Figure) -> bool:
    if row.label != figure.stack or row.spec.workload != figure.workload:
        return False
    for knob, value in figure.where:
        if knob == "threads" and row.stack.threads != value:
            return False
        if knob == "stack_cpus" and len(row.spec.stack_cpus) != value:
            return False
        if knob == "connections" and knob_value(row.spec, knob) != value:
            return False
    return True


def pairs(results: ResultSet, preset: Preset) -> list[tuple[Figure, float | None]]:
    rows = summarize(results).rows
    found: list[tuple[Figure, float | None]] = []
    for figure in preset.published:
        row = next((r for r in rows if _matches(r, figure)), None)
        measure = MEASURED.get(figure.metric)
        found.append((figure, measure(row) if row is not None and measure is not None else None))
    return found


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) < 10 else f"{value:,.0f}"


def render_published(results: ResultSet) -> str:
    name = results.header.options.get("preset")
    if not name:
        raise UserError("this run was not made from a preset (run --preset NAME), so there is nothing to set "
                        "beside it")
    preset = get_preset(str(name))
    grouped: dict[tuple[str, str, tuple[tuple[str, object], ...]], dict[str, tuple[float, float | None]]] = \
        defaultdict(dict)
    metrics: list[str] = []
    for figure, measured in pairs(results, preset):
        grouped[(figure.stack, figure.workload, figure.where)][figure.metric] = (figure.value, measured)
        if figure.metric not in metrics:
            metrics.append(figure.metric)
    lines = [f"Measured here (run {results.header.run_id}, preset `{preset.name}`) vs published "
             f"({preset.published_from}); each cell is published / here.", ""]
    head = ["Stack", "Workload", "Point", *metrics]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "|".join("---" for _ in head) + "|")
    for (stack, workload, where), values in grouped.items():
        point = " ".join(f"{k}={v}" for k, v in where) or "-"
        cells = [f"{_num(values[m][0])} / {_num(values[m][1])}" if m in values else "" for m in metrics]
        lines.append("| " + " | ".join([escape(stack), workload, point, *cells]) + " |")
    return "\n".join(lines) + "\n"
