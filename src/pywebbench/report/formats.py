"""Report formats by name, checked before any minute is spent (hyperfine's habit)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.report.csv_format import render_csv
from pywebbench.report.html import render_html, write_html
from pywebbench.report.json_format import render_json
from pywebbench.report.markdown import render_markdown
from pywebbench.report.published import render_published
from pywebbench.report.ranking_view import render_ranking
from pywebbench.report.terminal import WIDTH, render_terminal
from pywebbench.analyze.tuning import tuning_of
from pywebbench.report.tuning import render_tuning, render_tuning_markdown
from pywebbench.results.model import ResultSet

Renderer = Callable[[ResultSet], str]


def terminal_report(results: ResultSet, width: int = WIDTH, wide: bool = False) -> str:
    """A tuning run's answer first, then its windows' tables, fitted to `width` (wide: every column)."""
    tuning = tuning_of(results)
    return (render_tuning(tuning) + "\n" if tuning is not None else "") + render_terminal(results, width, wide)


def _markdown(results: ResultSet) -> str:
    tuning = tuning_of(results)
    return (render_tuning_markdown(tuning) + "\n" if tuning is not None else "") + render_markdown(results)


FORMATS: dict[str, Renderer] = {
    "terminal": terminal_report,
    "csv": render_csv,
    "json": render_json,
    "markdown": _markdown,
    "html": render_html,
    "ranking": render_ranking,
    "published": render_published,
}


Writer = Callable[[ResultSet, Path], None]

WRITERS: dict[str, Writer] = {
    "html": write_html,  # plotly.js once beside the page instead of inside it
}
"""Formats that write a file their own way (with files beside it); the rest write their text."""


def write_report(name: str, results: ResultSet, path: Path, render: Renderer | None = None) -> None:
    """The report in format `name` at `path` (made by `render` where given, e.g. a terminal table
    --wide); OSError if it cannot be written."""
    writer = WRITERS.get(name)
    if writer is not None:
        writer(results, path)
    else:
        path.write_text((render or renderer(name))(results), encoding="utf-8")


def renderer(name: str) -> Renderer:
    try:
        return FORMATS[name]
    except KeyError:
        raise UserError(f"unknown report format {name!r}; choose from {', '.join(FORMATS)}") from None
