"""The HTML report's charts (plotly): per cell, req/s with intervals, the latency spectrum and
CPU per request; across a sweep, req/s and p99 against each knob that varied, and the
open-loop latency curve. Each becomes a div with a stable id, so the same results give the
same page."""

from __future__ import annotations

import itertools
import math
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import plotly.graph_objects as go  # type: ignore[import-untyped]
import plotly.io as pio  # type: ignore[import-untyped]
from markupsafe import Markup
from plotly.colors import qualitative  # type: ignore[import-untyped]
from plotly.subplots import make_subplots  # type: ignore[import-untyped]

from pywebbench.analyze.rows import Row
from pywebbench.plan.knob_declarations import Knob, declared_knobs
from pywebbench.plan.knobs import knob_labels
from pywebbench.report.common import interval, num, validity_label
from pywebbench.results.model import TrialSpec

PLOTLY_CONFIG = {"displaylogo": False, "responsive": True, "modeBarButtonsToRemove": ["select2d", "lasso2d"]}
PALETTE = qualitative.Plotly + qualitative.D3 + qualitative.Dark24
INVALID_COLOR = "#9e9e9e"
# A small template instead of plotly's default: a full template is ~10 KB of JSON per chart.
TEMPLATE: dict[str, Any] = {"layout": {
    "font": {"family": "system-ui, -apple-system, 'Segoe UI', sans-serif", "size": 12},
    "paper_bgcolor": "white", "plot_bgcolor": "white", "hovermode": "closest",
    "xaxis": {"gridcolor": "#e8e8e8", "zerolinecolor": "#c8c8c8", "automargin": True},
    "yaxis": {"gridcolor": "#e8e8e8", "zerolinecolor": "#c8c8c8", "automargin": True},
    "margin": {"l": 10, "r": 20, "t": 30, "b": 40},
    "legend": {"orientation": "h", "yanchor": "top", "y": -0.18},
}}
# Latency spectrum x axis: 1 / (1 - p), so each nine takes the same width (an HDR plot).
NINES_TICKS = ((0.0, "0%"), (50.0, "50%"), (90.0, "90%"), (99.0, "99%"), (99.9, "99.9%"), (99.99, "99.99%"),
               (99.999, "99.999%"))



@dataclass(frozen=True)
class Chart:
    anchor: str
    title: str
    subtitle: str
    html: Markup


@dataclass(frozen=True)
class Axis:
    """A knob a sweep can vary, as TrialSpec holds it and as a chart's x axis shows it."""

    field: str
    """The TrialSpec field it reads (a field-less knob: its name, as knob_labels' omit takes it)."""
    title: str
    value: Callable[[TrialSpec], float | str | None]
    """A number, or a word for a knob of words (an interpreter, a pin): a category on the x axis."""
    blank: Callable[[TrialSpec], TrialSpec]
    """The spec with this knob cleared: what the other points of its sweep share."""


_AXES_FIRST = ("connections", "workers", "threads", "max_db_sessions", "db_delay_s", "db_pool", "upstream_delay_s",
               "cpu_size", "stack_cpus", "rate")
"""The order sweep charts have always come in; knobs declared since follow in declaration order."""


def axes() -> tuple[Axis, ...]:
    """A chart axis per declared knob (plan/knob_declarations.py), read when a report is drawn."""
    rank = {field: i for i, field in enumerate(_AXES_FIRST)}
    knobs = sorted(declared_knobs(), key=lambda k: rank.get(k.key, len(rank)))  # stable: the rest keep their order
    return tuple(_axis(knob) for knob in knobs)


def _axis(knob: Knob) -> Axis:
    return Axis(knob.key, knob.axis, lambda s: knob.axis_value(knob.setting(s)), knob.cleared)


class Figures:
    """Turns figures into divs with stable ids, so the same results give the same page."""

    def __init__(self) -> None:
        self._ids = itertools.count(1)

    def __call__(self, title: str, figure: go.Figure, subtitle: str = "") -> Chart:
        figure.update_layout(template=TEMPLATE)
        anchor = f"chart-{next(self._ids)}"
        html = pio.to_html(figure, include_plotlyjs=False, full_html=False, config=PLOTLY_CONFIG,
                           div_id=f"{anchor}-plot", default_width="100%")
        # plotly escapes its JSON for a script element; the rest is its own markup.
        return Chart(anchor, title, subtitle, Markup(html))


def stack_colors(rows: Sequence[Row]) -> dict[str, str]:
    """One color per stack across every chart, so a stack is easy to follow."""
    labels = sorted({r.label for r in rows})
    return {label: PALETTE[i % len(PALETTE)] for i, label in enumerate(labels)}


def cell_charts(rows: Sequence[Row], colors: dict[str, str], figures: Figures) -> tuple[Chart, ...]:
    """A cell's charts: req/s, the latency spectrum, CPU per request (each when it has data)."""
    made = (_rps_chart(rows, colors), _spectrum_chart(rows, colors), _cpu_chart(rows, colors))
    return tuple(figures(*chart) for chart in made if chart is not None)


def sweep_charts(rows: Sequence[Row], colors: dict[str, str], figures: Figures) -> list[Chart]:
    """A chart per knob that varied while everything else held still."""
    return [figures(title, figure, subtitle) for title, subtitle, figure in _sweeps(rows, colors)]


# The charts.

def _measured(rows: Sequence[Row]) -> list[Row]:
    return [r for r in rows if r.rps is not None]


def _height(bars: int) -> int:
    return max(260, 90 + 30 * bars)


def _rps_chart(rows: Sequence[Row], colors: dict[str, str]) -> tuple[str, go.Figure] | None:
    shown = _measured(rows)
    if not shown:
        return None
    labels = [r.label for r in shown]
    rps = [r.rps or 0.0 for r in shown]
    high = [(r.rps_ci[1] - (r.rps or 0.0)) if r.rps_ci else 0.0 for r in shown]
    low = [((r.rps or 0.0) - r.rps_ci[0]) if r.rps_ci else 0.0 for r in shown]
    figure = go.Figure()
    figure.add_bar(
        x=rps, y=labels, orientation="h", name="req/s",
        marker={"color": [colors[r.label] if r.valid else INVALID_COLOR for r in shown],
                "pattern": {"shape": ["" if r.valid else "/" for r in shown]}},
        error_x={"type": "data", "symmetric": False, "array": high, "arrayminus": low, "color": "#333"},
        customdata=[[interval(r.rps_ci, ",.0f") or "no interval (one repeat)", validity_label(r)] for r in shown],
        hovertemplate="%{y}<br>%{x:,.0f} req/s %{customdata[0]}<br>valid: %{customdata[1]}<extra></extra>",
    )
    rounds = [(v, r.label) for r in shown for v in r.rps_values]
    if rounds:
        figure.add_scatter(x=[v for v, _ in rounds], y=[label for _, label in rounds], mode="markers",
                           name="each repeat",
                           marker={"size": 11, "symbol": "line-ns-open", "color": "#222", "line": {"width": 2}},
                           hovertemplate="%{y}<br>repeat: %{x:,.0f} req/s<extra></extra>")
    figure.update_layout(height=_height(len(shown)), showlegend=False, barmode="overlay")
    figure.update_xaxes(title="requests per second", rangemode="tozero")
    figure.update_yaxes(autorange="reversed")
    return "Req/s by stack: 95% interval, each repeat marked", figure


def _spectrum(row: Row) -> list[tuple[float, float]]:
    """The row's latency spectrum, or its headline percentiles until a spectrum is recorded."""
    points = list(row.spectrum) or [(p, v) for p, v in ((50.0, row.p50_ms), (90.0, row.p90_ms), (95.0, row.p95_ms),
                                                          (99.0, row.p99_ms), (99.9, row.p999_ms)) if v is not None]
    return [(p, v) for p, v in points if p < 100.0]  # the maximum has no place on a nines axis


def _nines(percentile: float) -> float:
    return 1.0 / (1.0 - percentile / 100.0)


def _spectrum_chart(rows: Sequence[Row], colors: dict[str, str]) -> tuple[str, go.Figure] | None:
    lines = [(r, _spectrum(r)) for r in _measured(rows)]
    lines = [(r, points) for r, points in lines if points]
    if not lines:
        return None
    figure = go.Figure()
    for row, points in lines:
        figure.add_scatter(
            x=[_nines(p) for p, _ in points], y=[v for _, v in points], customdata=[p for p, _ in points],
            mode="lines+markers", name=row.label, line={"color": colors[row.label], "width": 2},
            marker={"size": 4}, hovertemplate=f"{row.label}<br>p%{{customdata}}: %{{y:,.2f}} ms<extra></extra>",
        )
    top = max(p for _, points in lines for p, _ in points)
    ticks = [(p, text) for p, text in NINES_TICKS if p <= max(top, 99.0)]
    figure.update_layout(height=max(320, 260 + 18 * len(lines)))
    figure.update_xaxes(type="log", title="percentile", tickvals=[_nines(p) for p, _ in ticks],
                        ticktext=[text for _, text in ticks])
    figure.update_yaxes(type="log", title="latency (ms, log)", **_log_ticks([v for _, pts in lines for _, v in pts]))
    return "Latency by percentile: each nine equally wide", figure


def _log_ticks(values: Sequence[float]) -> dict[str, Any]:
    """Label only the powers of ten once a log axis spans a decade (plotly adds 2s and 5s)."""
    positive = [v for v in values if v > 0]
    if positive and math.log10(max(positive) / min(positive)) >= 1:
        return {"dtick": 1}
    return {}


def _cpu_chart(rows: Sequence[Row], colors: dict[str, str]) -> tuple[str, go.Figure] | None:
    shown = [r for r in rows if r.cpu_ms_per_req is not None]
    if not shown:
        return None
    figure = go.Figure()
    figure.add_bar(
        x=[r.cpu_ms_per_req for r in shown], y=[r.label for r in shown], orientation="h",
        marker={"color": [colors[r.label] for r in shown]},
        customdata=[[num(r.cpu_percent, ".0f"), num(r.rss_mb, ",.0f")] for r in shown],
        hovertemplate="%{y}<br>%{x:.3g} CPU ms per request<br>CPU %{customdata[0]}% of a core, "
                      "RSS %{customdata[1]} MB<extra></extra>",
    )
    figure.update_layout(height=_height(len(shown)), showlegend=False)
    figure.update_xaxes(title="CPU ms per request", rangemode="tozero")
    figure.update_yaxes(autorange="reversed")
    return "App server CPU per request: lower is better", figure


def _sweep_groups(rows: Sequence[Row], axis: Axis) -> Iterator[list[Row]]:
    """Rows that differ only in this knob, where it takes at least two values (one for a rate:
    an open-loop run is worth its latency chart even at one rate)."""
    groups: dict[tuple[object, ...], list[Row]] = defaultdict(list)
    for row in _measured(rows):
        if axis.value(row.spec) is not None:
            groups[axis.blank(row.spec).cell].append(row)
    for group in groups.values():
        values = {axis.value(r.spec) for r in group}
        if len(values) >= (1 if axis.field == "rate" else 2):
            yield group


def _sweeps(rows: Sequence[Row], colors: dict[str, str]) -> Iterator[tuple[str, str, go.Figure]]:
    for axis in axes():
        for group in _sweep_groups(rows, axis):
            spec = group[0].spec
            subtitle = " - ".join(knob_labels(spec, omit=(axis.field,)))
            if axis.field == "rate":
                yield f"{spec.workload}: open loop, latency against offered rate", subtitle, _open_loop(group, colors)
            else:
                yield f"{spec.workload}: req/s and p99 against {axis.title}", subtitle, _sweep(group, axis, colors)


def _by_stack(rows: Sequence[Row], axis: Axis) -> dict[str, list[tuple[Any, Row]]]:
    lines: dict[str, list[tuple[Any, Row]]] = defaultdict(list)
    for row in rows:
        x = axis.value(row.spec)
        if x is not None:
            lines[row.label].append((x, row))
    return {label: sorted(points, key=lambda p: p[0]) for label, points in sorted(lines.items())}


def _x_axis(figure: go.Figure, xs: Sequence[float | str], title: str, col: int) -> None:
    if any(isinstance(x, str) for x in xs):  # words: categories in the order the values sort
        figure.update_xaxes(title=title, type="category", categoryorder="category ascending", row=1, col=col)
        return
    positive = [x for x in xs if isinstance(x, float | int) and x > 0]
    wide = len(positive) == len(xs) and bool(positive) and max(positive) / min(positive) >= 10
    figure.update_xaxes(title=title + (" (log)" if wide else ""), type="log" if wide else "linear", row=1, col=col)


def _sweep(rows: Sequence[Row], axis: Axis, colors: dict[str, str]) -> go.Figure:
    figure = make_subplots(rows=1, cols=2, subplot_titles=("req/s (95% interval)", "p99 latency (ms)"))
    for label, points in _by_stack(rows, axis).items():
        xs = [x for x, _ in points]
        style = {"color": colors[label], "width": 2}
        figure.add_scatter(
            x=xs, y=[r.rps for _, r in points], mode="lines+markers", name=label, legendgroup=label,
            line=style, row=1, col=1,
            error_y={"type": "data", "symmetric": False,
                     "array": [(r.rps_ci[1] - (r.rps or 0.0)) if r.rps_ci else 0.0 for _, r in points],
                     "arrayminus": [((r.rps or 0.0) - r.rps_ci[0]) if r.rps_ci else 0.0 for _, r in points]},
            hovertemplate=f"{label}<br>{axis.title} {_x_hover(xs)}: %{{y:,.0f}} req/s<extra></extra>",
        )
        figure.add_scatter(
            x=xs, y=[r.p99_ms for _, r in points], mode="lines+markers", name=label, legendgroup=label,
            showlegend=False, line=style, row=1, col=2,
            hovertemplate=f"{label}<br>{axis.title} {_x_hover(xs)}: p99 %{{y:,.1f}} ms<extra></extra>",
        )
    xs = [x for r in rows if (x := axis.value(r.spec)) is not None]
    for col in (1, 2):
        _x_axis(figure, xs, axis.title, col)
    figure.update_yaxes(rangemode="tozero", row=1, col=1)
    figure.update_yaxes(type="log", row=1, col=2, **_log_ticks([r.p99_ms for r in rows if r.p99_ms is not None]))
    figure.update_layout(height=440, margin={"t": 60})  # room for the mode bar above the subplot titles
    return figure


def _x_hover(xs: Sequence[object]) -> str:
    return "%{x}" if any(isinstance(x, str) for x in xs) else "%{x:g}"


def _open_loop(rows: Sequence[Row], colors: dict[str, str]) -> go.Figure:
    axis = next(a for a in axes() if a.field == "rate")
    figure = make_subplots(rows=1, cols=2, subplot_titles=(
        "achieved against offered req/s", "p99: corrected (solid), uncorrected (dotted)"))
    rates = sorted({x for r in rows if (x := axis.value(r.spec)) is not None})
    figure.add_scatter(x=rates, y=rates, mode="lines", name="offered", line={"color": "#999", "dash": "dash"},
                       hoverinfo="skip", row=1, col=1)
    for label, points in _by_stack(rows, axis).items():
        xs = [x for x, _ in points]
        style = {"color": colors[label], "width": 2}
        figure.add_scatter(x=xs, y=[r.rps for _, r in points], mode="lines+markers", name=label,
                           legendgroup=label, line=style, row=1, col=1,
                           hovertemplate=f"{label}<br>offered %{{x:,.0f}}: achieved %{{y:,.0f}} req/s<extra></extra>")
        figure.add_scatter(x=xs, y=[r.p99_ms for _, r in points], mode="lines+markers", name=f"{label} p99",
                           legendgroup=label, showlegend=False, line=style, row=1, col=2,
                           hovertemplate=f"{label}<br>offered %{{x:,.0f}} req/s: p99 %{{y:,.1f}} ms<extra></extra>")
        uncorrected = [(x, r.uncorrected_p99_ms) for x, r in points if r.uncorrected_p99_ms is not None]
        if uncorrected:
            figure.add_scatter(
                x=[x for x, _ in uncorrected], y=[v for _, v in uncorrected], mode="lines+markers",
                name=f"{label} p99 uncorrected", legendgroup=label, showlegend=False,
                line={**style, "dash": "dot"}, marker={"symbol": "circle-open"}, row=1, col=2,
                hovertemplate=f"{label}<br>offered %{{x:,.0f}} req/s: uncorrected p99 %{{y:,.1f}} ms<extra></extra>",
            )
    for col in (1, 2):
        _x_axis(figure, rates, axis.title, col)
    figure.update_yaxes(title="req/s", rangemode="tozero", row=1, col=1)
    p99s = [v for r in rows for v in (r.p99_ms, r.uncorrected_p99_ms) if v is not None]
    figure.update_yaxes(title="ms (log)", type="log", row=1, col=2, **_log_ticks(p99s))
    figure.update_layout(height=440, margin={"t": 60})  # room for the mode bar above the subplot titles
    return figure
