"""The connection shapes' columns in every report format (report/shape_columns.py): each shape's
table shows its own figures with their intervals (or that one launch gives none), the protocol
where it is not h1, and CSV and JSON carry every figure with its bounds."""

from __future__ import annotations

import pytest

import csv
import io
import json

from pywebbench.analyze.rows import Row, summarize
from pywebbench.report.columns import Format, TableInfo, row_cells, shown
from pywebbench.report.common import cells
from pywebbench.report.csv_format import render_csv
from pywebbench.report.html import render_html
from pywebbench.report.json_format import render_json
from pywebbench.report.markdown import render_markdown
from pywebbench.report.terminal import render_terminal
from pywebbench.results.model import ResultSet
from support.builders import header
from support.shape_results import LOOP, idle_windows, load, protocol_windows, stream_windows, window


def _run(trials: list) -> ResultSet:  # type: ignore[type-arg]
    return ResultSet(header(), tuple(trials), complete=True)


def _table(results: ResultSet, workload: str, fmt: Format) -> tuple[list[str], dict[str, list[str]]]:
    rows: list[Row] = next(c for c in cells(summarize(results).rows) if c[0].spec.workload == workload)
    info = TableInfo(rows)
    columns = shown(fmt, info)
    return ([c.header_in(fmt) for c in columns],
            {r.label: [cell.text for cell in row_cells(fmt, info, columns, r)] for r in rows})


def test_an_idle_table_shows_memory_per_connection_active_p99_and_the_connections() -> None:
    heads, by_stack = _table(_run(idle_windows()), "idle", Format.MARKDOWN)
    for head in ("RSS KB/conn", "Socket KB/conn", "Active p99 ms", "Held/refused/closed"):
        assert head in heads
    assert "MB/s" not in heads and "Events/s" not in heads and "Protocol" not in heads
    loop = dict(zip(heads, by_stack[LOOP.id], strict=True))
    assert loop["RSS KB/conn"].startswith("3.0 [") and "–" in loop["RSS KB/conn"]  # the t interval over 3 launches
    assert loop["Held/refused/closed"] == "100/0/0 of 100"


def test_one_launch_shows_the_value_and_says_it_has_no_interval() -> None:
    heads, by_stack = _table(_run(stream_windows()[:1]), "stream", Format.TERMINAL)
    figures = dict(zip(heads, by_stack[LOOP.id], strict=True))
    assert figures["MB/s"] == "10.0, no interval (1 launch)"
    assert "CPU s/MB" in figures


def test_the_protocol_is_a_column_where_a_row_is_not_h1() -> None:
    tables = cells(summarize(_run(protocol_windows())).rows)  # a cell per protocol
    shown_in = {rows[0].spec.protocol: [c.header_in(Format.TERMINAL) for c in shown(Format.TERMINAL, TableInfo(rows))]
                for rows in tables}
    assert set(shown_in) == {"h1", "h2c", "h2-tls"}
    assert "Protocol" in shown_in["h2c"] and "Protocol" in shown_in["h2-tls"] and "Protocol" not in shown_in["h1"]
    h2c = next(rows for rows in tables if rows[0].spec.protocol == "h2c")
    info = TableInfo(h2c)
    columns = shown(Format.MARKDOWN, info)
    texts = dict(zip((c.name for c in columns), (c.text for c in row_cells(Format.MARKDOWN, info, columns, h2c[0])),
                     strict=True))
    assert texts["protocol"] == "h2c"


def test_every_format_carries_the_shape_figures() -> None:
    results = _run(idle_windows() + stream_windows())
    assert "RSS KB/conn" in render_terminal(results) and "MB/s" in render_terminal(results)
    assert "| RSS KB/conn | Socket KB/conn | Active p99 ms |" in render_markdown(results)
    html = render_html(results, plotly_src="plotly.js")
    assert "RSS KB/conn" in html and "Student" in html  # the header's hint says how the interval is made
    records = list(csv.DictReader(io.StringIO(render_csv(results))))
    stream = next(r for r in records if r["workload"] == "stream")
    assert float(stream["shape_mb_s"]) == pytest.approx(6000 ** (1 / 3), abs=0.001) and stream["shape_mb_s_ci_low"] and stream["shape_launches"] == "3"
    idle = next(r for r in records if r["workload"] == "idle" and r["stack"] == LOOP.id)
    assert idle["shape_held_min"] == idle["shape_asked"] and idle["shape_rss_kb_per_conn"]
    rows = json.loads(render_json(results))["rows"]
    assert all("shape_rate" in row for row in rows)


def test_a_run_without_shapes_has_no_shape_columns() -> None:
    results = _run([window(LOOP, "hello", launch, load(100.0 + launch, 1.0)) for launch in (1, 2)])
    assert "shape_rate" not in render_csv(results).splitlines()[0]
    assert "RSS KB/conn" not in render_terminal(results, wide=True)
