"""The HTML report: one page rebuilt from the results file alone, that opens from disk with no
network. Tables sort by any column (their columns are report/columns.py's); the charts are
report/html_charts.py's.

plotly.js is 4.7 MB. Printed to stdout, a page carries it inline (self-contained); written to a
file (`write_html`, `report --format html -o FILE`), the page loads it from a
`plotly-VERSION.min.js` written once beside it, so every report in a directory shares one copy.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from jinja2 import Environment, PackageLoader
from markupsafe import Markup
from plotly.offline import get_plotlyjs, get_plotlyjs_version  # type: ignore[import-untyped]

from pywebbench.analyze.rows import Row, summarize
from pywebbench.measure.checks import advice
from pywebbench.report.check_summary import CheckLine, check_lines, kinds
from pywebbench.report.columns import Align, Cell, Column, Format, TableInfo, row_cells, shown
from pywebbench.report.common import cell_title, cells, method_head, method_reading, run_workloads
from pywebbench.report.html_charts import Chart, Figures, cell_charts, stack_colors, sweep_charts
from pywebbench.report.deploy import app_notes, deploy_commands
from pywebbench.report.profile_view import FlameView, flame_views
from pywebbench.analyze.tuning import tuning_of
from pywebbench.report.tuning import tuning_cells, tuning_footer, tuning_headers, tuning_title
from pywebbench.results.model import ResultSet

PLOTLY_FILE = f"plotly-{get_plotlyjs_version()}.min.js"
"""The name plotly.js is written under beside a report: versioned, so a report made with
another plotly beside it keeps its own."""


@dataclass(frozen=True)
class HeaderCell:
    title: str
    numeric: bool
    hint: str


@dataclass(frozen=True)
class TableRow:
    cells: tuple[Cell, ...]
    valid: bool
    checks: tuple[CheckLine, ...]
    """A line per kind of check under the row, its windows' own notes folded in it."""
    note: str | None


@dataclass(frozen=True)
class Section:
    anchor: str
    title: str
    headers: tuple[HeaderCell, ...]
    sort_column: int
    """The column the table arrives sorted by (req/s, highest first)."""
    rows: tuple[TableRow, ...]
    charts: tuple[Chart, ...]
    flames: tuple[FlameView, ...] = ()
    """Its stacks' profiled windows (--profile), beside the table."""


def render_html(results: ResultSet, plotly_src: str | None = None) -> str:
    """The page; plotly.js inline, or loaded from `plotly_src` (a file beside the page)."""
    summary = summarize(results)
    colors = stack_colors(summary.rows)
    figures = Figures()
    client_keepalive = bool(results.header.options.get("keepalive", True))
    grouped = cells(summary.rows, run_workloads(results))
    sections = [_section(number, TableInfo(rows, client_keepalive), cell_charts(rows, colors, figures))
                for number, rows in enumerate(grouped, start=1)]
    statuses: dict[str, int] = defaultdict(int)
    for trial in results.trials:
        statuses[trial.status.value] += 1
    paired = [r for r in summary.rows if r.method.paired]
    template = _environment().get_template("report.html")
    return template.render(
        results=results,
        header=results.header,
        machine=results.header.machine,
        options=[(k, _plain(v)) for k, v in sorted(results.header.options.items())],
        services=[(s, [(k, _plain(v)) for k, v in sorted(s.config.items())]) for s in results.services],
        environments=sorted(results.environments.values(), key=lambda e: e.hash),
        statuses=sorted(statuses.items()),
        summary=summary,
        aggregation=" / ".join(sorted({r.aggregation for r in summary.rows})) or "median",
        # The method's first sentence shows; how to read it is a click away, so the table is on the first screen.
        method=(method_head(paired), method_reading(paired)) if paired else None,
        sections=sections,
        sweeps=sweep_charts(summary.rows, colors, figures),
        notes=_notes([row for rows in grouped for row in rows]),
        advice=[(kind, advice(kind)) for kind in kinds(summary.rows)],
        deploy=deploy_commands(results),
        tuning=_tuning_context(results),
        app_notes=app_notes(results),
        plotly_src=plotly_src,
        plotly_js=None if plotly_src else Markup(get_plotlyjs()),
    )


def _tuning_context(results: ResultSet) -> dict[str, object] | None:
    """A tuning run's answer for the page's first section: its table, notes and deploy lines."""
    tuning = tuning_of(results)
    if tuning is None:
        return None
    return {"title": tuning_title(tuning), "headers": tuning_headers(tuning), "rows": tuning_cells(tuning),
            "footer": tuning_footer(tuning), "deploy": tuning.deploy}


def write_html(results: ResultSet, path: Path) -> None:
    """The page at `path`, loading plotly.js from the copy beside it (written if not there)."""
    _write_plotly(path.parent / PLOTLY_FILE)
    path.write_text(render_html(results, plotly_src=PLOTLY_FILE), encoding="utf-8")


def _write_plotly(path: Path) -> None:
    script = get_plotlyjs().encode()
    try:
        if path.read_bytes() == script:
            return
    except FileNotFoundError:
        pass
    # Through a temporary name: two reports written at once never leave a half file to load.
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".plotly-", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(script)
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _environment() -> Environment:
    return Environment(loader=PackageLoader("pywebbench.report", "templates"), autoescape=True,
                       trim_blocks=True, lstrip_blocks=True)


def _plain(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _section(number: int, info: TableInfo, charts: tuple[Chart, ...]) -> Section:
    columns = shown(Format.HTML, info)
    headers = tuple(HeaderCell(c.header_in(Format.HTML), c.align is Align.RIGHT, c.hint) for c in columns)
    rows = tuple(_table_row(info, columns, row) for row in info.rows)
    sort_column = next(i for i, c in enumerate(columns) if c.name == "rps")
    return Section(f"cell-{number}", cell_title(info.rows[0].spec), headers, sort_column, rows, charts,
                   flame_views(info.rows))


def _table_row(info: TableInfo, columns: Sequence[Column], row: Row) -> TableRow:
    return TableRow(row_cells(Format.HTML, info, columns, row), row.valid, check_lines(row), row.note)


def _notes(rows: Sequence[Row]) -> list[tuple[str, str, str]]:
    """(stack, cell, note) for every row that failed to run."""
    return [(r.label, cell_title(r.spec), r.note) for r in rows if r.note]
