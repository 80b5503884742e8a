"""The column registry (report/columns.py) and the three tables built from it: terminal,
Markdown and HTML take their columns, headers and cell texts from the one list, so a column
added there appears in every format that names it."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

from pywebbench.analyze.rows import Row, summarize
from pywebbench.report import columns as registry
from pywebbench.report.columns import COLUMNS, Align, Column, Format, Look, TableInfo, column, row_cells, shown
from pywebbench.report.common import cells
from pywebbench.report.formats import renderer, terminal_report, write_report
from pywebbench.report.html import PLOTLY_FILE, render_html
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results
from support.results_fixture import write_results

PAIRED_RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "calibrate" / "duet" / "1"


@pytest.fixture(scope="module")
def restart(tmp_path_factory: pytest.TempPathFactory) -> ResultSet:
    return load_results(write_results(tmp_path_factory.mktemp("run")))


@pytest.fixture(scope="module")
def paired() -> ResultSet:
    return load_results(PAIRED_RUN)


def _first_cell(results: ResultSet) -> list[Row]:
    return cells(summarize(results).rows)[0]


def _headers(fmt: Format, rows: list[Row]) -> list[str]:
    return [c.header_in(fmt) for c in shown(fmt, TableInfo(rows))]


def test_every_column_has_a_unique_name_and_at_least_one_format() -> None:
    names = [c.name for c in COLUMNS]
    assert len(names) == len(set(names))
    assert all(c.formats for c in COLUMNS)
    assert column("rps").header == "Req/s"


def test_restart_tables_show_the_req_s_interval_and_no_paired_columns(restart: ResultSet) -> None:
    rows = _first_cell(restart)
    assert _headers(Format.TERMINAL, rows) == [
        "Stack", "Type", "Workers", "Req/s", "95% CI", "Ratio [95% CI]", "P50 ms", "P99 ms", "Errors", "#DB",
        "CPU ms/req", "RSS MB", "Keep-alive", "Valid"]
    assert _headers(Format.MARKDOWN, rows) == [
        "Framework", "Server", "Type", "Workers", "Req/s [95% CI]", "Ratio [95% CI]", "P50 ms", "P99 ms", "Errors",
        "#DB", "CPU ms/req", "RSS MB", "Valid", "Checks"]
    assert _headers(Format.HTML, rows) == [
        "Framework", "Server", "Type", "Workers", "Req/s", "Ratio", "P50 ms", "P90 ms", "P99 ms", "Errors", "#DB",
        "CPU ms/req", "CPU %", "RSS MB", "Keep-alive", "Valid / checks"]


def test_paired_terminal_tables_show_the_ratio_interval_ties_and_cpu_ratio(paired: ResultSet,
                                                                           restart: ResultSet) -> None:
    rows = _first_cell(paired)
    headers = _headers(Format.TERMINAL, rows)
    assert headers[3:8] == ["Req/s", "Ratio [95% CI]", "Tie", "Next", "CPU/req ratio"]
    assert "95% CI" not in headers
    for fmt in (Format.MARKDOWN, Format.HTML):  # every format shows the ties, after the ratio
        restart_headers = _headers(fmt, _first_cell(restart))
        at = restart_headers.index(column("ratio").header_in(fmt)) + 1
        assert _headers(fmt, rows) == [*restart_headers[:at], "Tie", "vs next", *restart_headers[at:]]


def test_open_loop_tables_add_the_uncorrected_p99_to_the_terminal(restart: ResultSet) -> None:
    open_loop = next(rows for rows in cells(summarize(restart).rows) if rows[0].spec.rate is not None)
    assert "P99 uncorr." in _headers(Format.TERMINAL, open_loop)
    assert "P99 uncorr." not in _headers(Format.TERMINAL, _first_cell(restart))


def test_a_format_writes_a_column_its_own_way(paired: ResultSet) -> None:
    rows = _first_cell(paired)
    info = TableInfo(rows)
    row = next(r for r in rows if r.ratio_ci is not None and r.ratio is not None)
    ratio = column("ratio")
    low, high = row.ratio_ci
    # The terminal keeps the interval in the ratio's own cell, so no squeeze can part them.
    assert ratio.text_in(Format.TERMINAL, row, info) == f"{row.ratio:.2f} [{low:.2f}, {high:.2f}]"
    assert ratio.text_in(Format.HTML, row, info) == f"{row.ratio:.2f}"
    assert ratio.text_in(Format.MARKDOWN, row, info).startswith(f"{row.ratio:.2f} [")
    assert ratio.detail_in(Format.HTML, row).startswith("[")
    assert ratio.detail_in(Format.TERMINAL, row) == ""
    assert ratio.sort_key(row) == repr(row.ratio)


def test_sort_keys_are_raw_numbers_missing_ones_empty(restart: ResultSet) -> None:
    rows = summarize(restart).rows
    unmeasured = next(r for r in rows if r.rps is None)
    measured = next(r for r in rows if r.rps is not None and r.errors == 0)
    assert column("rps").sort_key(unmeasured) == ""
    assert column("errors").sort_key(measured) == "0.0"
    assert column("server").sort_key(measured) == column("server").text_in(Format.HTML, measured, TableInfo([]))
    assert column("valid").sort_key(measured).startswith("0")


def test_an_alias_keeps_two_rows_of_one_stack_apart_in_every_format(paired: ResultSet) -> None:
    rows = _first_cell(paired)
    for fmt in Format:
        name = column("stack" if fmt is Format.TERMINAL else "framework")  # the terminal names a row by its label
        names = [cell.text for row in rows for cell in row_cells(fmt, TableInfo(rows), [name], row)]
        assert len(set(names)) == len(names), (fmt, names)


def test_keepalive_off_at_the_client_is_shown_so_in_terminal_and_html(restart: ResultSet) -> None:
    header = replace(restart.header, options={**restart.header.options, "keepalive": False})
    results = replace(restart, header=header)
    assert "off (client)" in terminal_report(results, wide=True)  # Keep-alive: a --wide column
    assert "off (client)" in render_html(results)
    assert "off (client)" not in terminal_report(restart, wide=True)


def test_terminal_titles_tell_every_cell_apart(restart: ResultSet) -> None:
    text = renderer("terminal")(restart)
    titles = [line.rstrip() for line in text.splitlines() if re.match(r"^(hello|db) - ", line)]
    assert len(titles) == len(cells(summarize(restart).rows))
    assert len(set(titles)) == len(titles)  # open-loop rates were missing from the titles


def test_a_new_column_is_one_entry(monkeypatch: pytest.MonkeyPatch, restart: ResultSet) -> None:
    extra = Column("trials", "Windows", lambda r: r.trials, lambda r, t: f"w{r.trials}",
                   {Format.TERMINAL: Look(), Format.MARKDOWN: Look(), Format.HTML: Look(detail=lambda r: "d")})
    monkeypatch.setattr(registry, "COLUMNS", (*COLUMNS, extra))
    terminal, markdown, html = (renderer(name)(restart) for name in ("terminal", "markdown", "html"))
    # The terminal's default table is report/terminal_table.ESSENTIAL; --wide shows every column.
    assert "More columns: " in terminal and "Windows" in terminal.split("More columns: ")[1].splitlines()[0]
    assert re.search(r"│ +w\d+ │", terminal_report(restart, wide=True))
    assert "Windows" in markdown and "Windows" in html
    assert re.search(r"\| w\d+ \|\n", markdown)
    assert re.search(r'<td class="num" data-sort="\d+\.0">w\d+<span class="detail">d</span>', html)


def test_markdown_aligns_numbers_right(restart: ResultSet) -> None:
    markdown = renderer("markdown")(restart)
    rule = next(line for line in markdown.splitlines() if line.startswith("| ---"))
    aligns = rule.strip("| ").split(" | ")
    expected = ["---:" if c.align is Align.RIGHT else "---" for c in shown(Format.MARKDOWN, TableInfo(
        _first_cell(restart)))]
    assert aligns == expected


def test_html_written_to_a_file_shares_one_plotly_beside_it(restart: ResultSet, tmp_path: Path) -> None:
    write_report("html", restart, tmp_path / "a.html")
    script = tmp_path / PLOTLY_FILE
    first = script.stat()
    write_report("html", restart, tmp_path / "b.html")
    assert script.stat().st_mtime_ns == first.st_mtime_ns  # written once, not per report
    assert script.read_text() == get_plotlyjs()
    page = (tmp_path / "b.html").read_text()
    assert f'<script src="{PLOTLY_FILE}"></script>' in page
    assert get_plotlyjs()[:2000] not in page
    assert len(page.encode()) < 1_000_000  # the charts, not plotly (4.8 MB)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["a.html", "b.html", PLOTLY_FILE])


def test_html_replaces_a_wrong_plotly_beside_it(restart: ResultSet, tmp_path: Path) -> None:
    (tmp_path / PLOTLY_FILE).write_text("truncated")
    write_report("html", restart, tmp_path / "r.html")
    assert (tmp_path / PLOTLY_FILE).read_text() == get_plotlyjs()


def test_html_to_stdout_carries_plotly_inline(restart: ResultSet) -> None:
    page = renderer("html")(restart)
    assert get_plotlyjs() in page and "<script src=" not in page


def test_other_formats_write_their_text(restart: ResultSet, tmp_path: Path) -> None:
    write_report("markdown", restart, tmp_path / "r.md")
    assert (tmp_path / "r.md").read_text() == renderer("markdown")(restart)
    assert [p.name for p in tmp_path.iterdir()] == ["r.md"]
