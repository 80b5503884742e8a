"""The connection shapes' own columns (issue 50): which a shape's table shows, and how a figure
with its interval is written (analyze/shape_figures.py makes the figures; report/columns.py holds
the columns themselves beside the others)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pywebbench.analyze.rows import Row
from pywebbench.analyze.shape_figures import Figure, ShapeRow
from pywebbench.report.common import interval, latency_format

SHOWN: dict[str, tuple[str, ...]] = {
    "idle": ("shape_rss", "shape_socket", "shape_active_p99", "shape_connections"),
    "close": ("shape_rps",),
    "stream": ("shape_mb_s", "shape_cpu_per_mb"),
    "upload": ("shape_mb_s", "shape_cpu_per_mb"),
    "sse": ("shape_events", "shape_delivery_p99", "shape_connections"),
    "ws-echo": ("shape_messages", "shape_rtt_p99"),
}
"""Each shape's figures, as the issue asks for them: its table's own columns."""

DEFAULT_PROTOCOL = "h1"

ShapeGet = Callable[[ShapeRow], Figure | None]


def shows(name: str, rows: Sequence[Row]) -> bool:
    """A shape column is shown in a table of the workload it belongs to."""
    return bool(rows) and name in SHOWN.get(rows[0].spec.workload, ())


def protocol_of(row: Row) -> str:
    return row.spec.protocol or DEFAULT_PROTOCOL


def shows_protocol(rows: Sequence[Row]) -> bool:
    """The protocol is a column where any row spoke other than HTTP/1.1 in the clear."""
    return any(protocol_of(r) != DEFAULT_PROTOCOL for r in rows)


def number(value: float, spec: str) -> str:
    return latency_format(value) if spec == "ms" else format(value, spec)


def bounds_text(figure: Figure, spec: str) -> str:
    """'[11.9–12.8]' in the value's own format (a latency's digits by its size), '' with no interval."""
    if spec == "ms" and figure.interval is not None:
        return f"[{latency_format(figure.interval[0])}–{latency_format(figure.interval[1])}]"
    return interval(figure.interval, spec)


def no_interval(figure: Figure) -> str:
    return f"no interval ({figure.launches} launch{'es' if figure.launches != 1 else ''})"


def figure_text(figure: Figure | None, spec: str) -> str:
    """'12.3 [11.9–12.8]', or '12.3, no interval (1 launch)'; '-' where the row has none."""
    if figure is None:
        return "-"
    bounds = bounds_text(figure, spec)
    return f"{number(figure.value, spec)} {bounds}" if bounds else f"{number(figure.value, spec)}, {no_interval(figure)}"


def figure_value(get: ShapeGet) -> Callable[[Row], float | None]:
    def value(row: Row) -> float | None:
        found = get(row.shape) if row.shape is not None else None
        return found.value if found is not None else None
    return value


def figure_cell(get: ShapeGet, spec: str) -> Callable[[Row], str]:
    return lambda row: figure_text(get(row.shape) if row.shape is not None else None, spec)


def figure_alone(get: ShapeGet, spec: str) -> Callable[[Row], str]:
    """The value without its interval (HTML, which puts the interval on a line below)."""
    def text(row: Row) -> str:
        found = get(row.shape) if row.shape is not None else None
        return "-" if found is None else number(found.value, spec)
    return text


def figure_detail(get: ShapeGet, spec: str) -> Callable[[Row], str]:
    def detail(row: Row) -> str:
        found = get(row.shape) if row.shape is not None else None
        if found is None:
            return ""
        return bounds_text(found, spec) or no_interval(found)
    return detail


def connections_text(row: Row) -> str:
    """'998/0/2 of 1000': the fewest held at a window's end, the most refused and closed in one window."""
    shape = row.shape
    if shape is None or shape.asked is None:
        return "-"
    return f"{shape.held}/{shape.refused}/{shape.closed} of {shape.asked}"


def connections_value(row: Row) -> float | None:
    return None if row.shape is None or row.shape.held is None else float(row.shape.held)
