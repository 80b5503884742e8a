"""`history show`: each series of a history over commits, with the steps its change points mark,
as a terminal table, Markdown or an HTML page of charts. Renderers only: a HistoryView in, text
out. The history may come from anyone (a CI artifact), so every stored string is made inert."""

from __future__ import annotations

import io
from collections.abc import Callable

import plotly.graph_objects as go  # type: ignore[import-untyped]
from markupsafe import escape as html_escape
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]
from rich.table import Table

from pywebbench.analyze.history import HistoryView, Point, Series, Step
from pywebbench.report.common import inert, plain_console
from pywebbench.report.html_charts import INVALID_COLOR, Chart, Figures
from pywebbench.report.markdown import code, escape

STEP_COLOR = "#d62728"
LEVEL_COLOR = "#7f7f7f"


def short_commit(commit: str) -> str:
    """A full hex SHA as git abbreviates it; anything else (a tag, a name) as given."""
    return commit[:10] if len(commit) == 40 and all(c in "0123456789abcdef" for c in commit.lower()) else commit


def _value(view: HistoryView, value: float | None) -> str:
    return "-" if value is None else format(value, view.info.format)


def _interval(view: HistoryView, interval: tuple[float, float] | None) -> str:
    if interval is None:
        return ""
    return f"[{format(interval[0], view.info.format)}, {format(interval[1], view.info.format)}]"


def step_text(view: HistoryView, step: Step, where: bool = True) -> str:
    """'-5.1% at 1a2b3c4d5e (1,000 -> 949, worse)'; without `where` on the commit's own line."""
    worse = (step.after < step.before) == view.info.better_higher
    at = f" at {short_commit(step.commit)}" if where else ""
    return (f"{step.change:+.1%}{at} ({_value(view, step.before)} -> {_value(view, step.after)}, "
            f"{'worse' if worse else 'better'})")


def _title(view: HistoryView) -> str:
    machines = f"; machines: {', '.join(view.machines)}" if len(view.machines) > 1 else ""
    return (f"history {view.name}: {view.entries} entries, {len(view.series)} series, {view.info.title} "
            f"({view.info.unit}){machines}")


def _series_name(view: HistoryView, series: Series) -> str:
    key = series.key
    machine = f" on {key.machine}" if len(view.machines) > 1 else ""
    return f"{key.stack} / {key.workload} / {key.setting}{machine}"


def _latest(series: Series) -> float | None:
    return next((p.value for p in reversed(series.points) if p.value is not None), None)


def _steps_text(view: HistoryView, series: Series) -> str:
    return "; ".join(step_text(view, s) for s in series.steps) or "none"


VALIDITY = {True: "yes", False: "NO: left out", None: "?"}
"""A point's validity as the tables show it (? : kept under history schema 1, not recorded)."""


def _point_rows(view: HistoryView, series: Series) -> list[tuple[str, str, str, str, str, str, str]]:
    """(#, commit, branch, value, interval, valid, step) per point; the step on the point it starts at."""
    starts = {s.position: s for s in series.steps}
    return [(str(i + 1), short_commit(p.commit), p.branch, _value(view, p.value), _interval(view, p.interval),
             VALIDITY[p.valid], f"step {step_text(view, starts[i], where=False)}" if i in starts else "")
            for i, p in enumerate(series.points)]


def render_history_terminal(view: HistoryView, width: int = 150) -> str:
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    console.print(_title(view))
    summary = Table(title="Series and their steps", title_justify="left")
    for name in ("Stack", "Workload", "Setting", "Points", f"Latest {view.info.title}", "Steps"):
        summary.add_column(name)
    for s in view.series:
        summary.add_row(s.key.stack, s.key.workload, s.key.setting, str(len(s.points)), _value(view, _latest(s)),
                        _steps_text(view, s))
    console.print(summary)
    for s in view.series:
        console.print()
        console.print(_series_name(view, s))
        table = Table()
        for name in ("#", "Commit", "Branch", view.info.title, "95% interval", "Valid", "Step"):
            table.add_column(name)
        for cells in _point_rows(view, s):
            table.add_row(*cells)
        console.print(table)
    return inert(buffer.getvalue())


def render_history_markdown(view: HistoryView) -> str:
    lines = [f"**pywebbench {escape(_title(view))}**", "",
             f"| Stack | Workload | Setting | Points | Latest {escape(view.info.title)} | Steps |",
             "|---|---|---|---:|---:|---|"]
    lines += [f"| {escape(s.key.stack)} | {escape(s.key.workload)} | {escape(s.key.setting)} | {len(s.points)} | "
              f"{_value(view, _latest(s))} | {escape(_steps_text(view, s))} |" for s in view.series]
    for s in view.series:
        lines += ["", f"### {escape(_series_name(view, s))}", "",
                  f"| # | Commit | Branch | {escape(view.info.title)} | 95% interval | Valid | Step |",
                  "|---:|---|---|---:|---|---|---|"]
        lines += [f"| {n} | {code(commit)} | {escape(branch)} | {value} | {interval} | {valid} | {escape(step)} |"
                  for n, commit, branch, value, interval, valid, step in _point_rows(view, s)]
    return "\n".join(lines) + "\n"


def render_history_html(view: HistoryView) -> str:
    """A page that opens from disk with no network: plotly.js inline, one chart per series."""
    figures = Figures()
    charts = [figures(_series_name(view, s), _chart(view, s), _steps_text(view, s)) for s in view.series]
    title = html_escape(inert(_title(view)))
    body = "\n".join(_chart_section(c) for c in charts) or "<p>No series: the history has no entries.</p>"
    return (f"<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{title}</title>\n"
            f"<style>body{{font-family:system-ui,sans-serif;margin:2em;max-width:1200px}}"
            f"h2{{font-size:1.1em;margin-top:2em}}.steps{{color:#555}}</style>\n"
            f"<script>{get_plotlyjs()}</script>\n</head>\n<body>\n<h1>{title}</h1>\n{body}\n</body>\n</html>\n")


def _chart_section(chart: Chart) -> str:
    return (f"<section id=\"{chart.anchor}\">\n<h2>{html_escape(inert(chart.title))}</h2>\n"
            f"<p class=\"steps\">steps: {html_escape(chart.subtitle)}</p>\n{chart.html}\n</section>")


def _chart(view: HistoryView, series: Series) -> go.Figure:
    """The values over commits with their intervals, each level's median, and a line where each
    step starts, labelled with its commit."""
    points = series.points
    xs = list(range(len(points)))
    measured = [(x, p) for x, p in zip(xs, points) if p.counted]
    invalid = [(x, p) for x, p in zip(xs, points) if p.value is not None and not p.counted]
    figure = go.Figure()
    if invalid:
        figure.add_scatter(x=[x for x, _ in invalid], y=[p.value for _, p in invalid], mode="markers",
                           name="invalid (left out)", marker={"symbol": "x", "color": INVALID_COLOR, "size": 9},
                           customdata=[[short_commit(p.commit)] for _, p in invalid],
                           hovertemplate="%{customdata[0]}: %{y:" + view.info.format + "}<br>invalid: some window had "
                           "errors; left out of the steps<extra></extra>")
    figure.add_scatter(
        x=[x for x, _ in measured], y=[p.value for _, p in measured], mode="lines+markers", name=view.info.title,
        error_y=_error_bars(measured), customdata=[[short_commit(p.commit), p.branch, p.run_dir] for _, p in measured],
        hovertemplate="%{customdata[0]} (%{customdata[1]})<br>%{y:" + view.info.format + "}<br>%{customdata[2]}"
        "<extra></extra>")
    for start, end, level in _levels(series):
        figure.add_scatter(x=[start - 0.4, end - 0.6], y=[level, level], mode="lines", showlegend=False,
                           line={"color": LEVEL_COLOR, "dash": "dot"}, hoverinfo="skip")
    for step in series.steps:
        figure.add_vline(x=step.position - 0.5, line={"color": STEP_COLOR, "dash": "dash"})
        figure.add_annotation(x=step.position - 0.5, y=1, yref="paper", yanchor="bottom", showarrow=False,
                              text=f"{step.change:+.1%} at {short_commit(step.commit)}", font={"color": STEP_COLOR})
    figure.update_layout(height=340, showlegend=False, margin={"t": 40})
    figure.update_xaxes(tickvals=xs, ticktext=[short_commit(p.commit) for p in points], tickangle=-45, title="commit")
    figure.update_yaxes(title=view.info.unit)
    return figure


def _error_bars(measured: list[tuple[int, Point]]) -> dict[str, object]:
    def gap(pick: Callable[[tuple[float, float], float], float]) -> list[float]:
        return [pick(p.interval, p.value) if p.interval is not None and p.value is not None else 0.0
                for _, p in measured]
    return {"type": "data", "symmetric": False, "array": gap(lambda i, v: i[1] - v),
            "arrayminus": gap(lambda i, v: v - i[0]), "color": "#555"}


def _levels(series: Series) -> list[tuple[int, int, float]]:
    """(first position, position after the last, median) of each level between steps."""
    if not series.steps:
        return []
    bounds = [0, *(s.position for s in series.steps), len(series.points)]
    medians = [series.steps[0].before, *(s.after for s in series.steps)]
    return [(a, b, m) for a, b, m in zip(bounds, bounds[1:], medians)]


HISTORY_FORMATS: dict[str, Callable[[HistoryView], str]] = {
    "terminal": render_history_terminal,
    "markdown": render_history_markdown,
    "html": render_history_html,
}
