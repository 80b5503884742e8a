"""The terminal table fits the terminal and never cuts a cell (report/terminal_table.py): the
committed default run (`./scripts/bench`, a duet run of 14 stacks on hello) at 80, 100, 120 and
200 columns shows every row's ratio with its whole interval, no line wider than the terminal
and no ellipsis; the other columns are --wide's."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.analyze.rows import Row, summarize
from pywebbench.commands.arguments import build_parser
from pywebbench.cli import main
from pywebbench.jobs.console import render_terminal_for
from pywebbench.report.columns import Format, TableInfo, shown
from pywebbench.report.terminal import render_terminal
from pywebbench.report.terminal_table import ESSENTIAL, fit
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results

DEFAULT_RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "rankings" / "default-auto"
WIDTHS = (80, 100, 120, 200)


@pytest.fixture(scope="module")
def results() -> ResultSet:
    return load_results(DEFAULT_RUN)


@pytest.fixture(scope="module")
def rows(results: ResultSet) -> tuple[Row, ...]:
    found = summarize(results).rows
    assert len(found) == 14 and all(r.ratio is not None and r.ratio_ci is not None for r in found)
    return found


def _interval(row: Row) -> str:
    """The ratio and its interval as computed by the summary, as the table must show them."""
    assert row.ratio is not None and row.ratio_ci is not None
    return f"{row.ratio:.2f} [{row.ratio_ci[0]:.2f}, {row.ratio_ci[1]:.2f}]"


def _row_line(text: str, row: Row) -> str:
    return next(line for line in text.splitlines() if line.startswith(f"│ {row.label} "))


@pytest.mark.parametrize("width", WIDTHS)
def test_every_ratio_interval_is_whole_and_no_line_is_wider_than_the_terminal(
        results: ResultSet, rows: tuple[Row, ...], width: int) -> None:
    text = render_terminal(results, width)
    assert max(len(line) for line in text.splitlines()) <= width
    assert "…" not in text
    for row in rows:
        assert _interval(row) in _row_line(text, row), (width, row.label)


def test_at_100_columns_every_essential_column_shows_in_full(results: ResultSet, rows: tuple[Row, ...]) -> None:
    text = render_terminal(results, 100)
    assert [c.name for c in fit(TableInfo(rows), 100).columns] == [
        "stack", "rps", "ratio", "next", "cpu_ms_per_req", "rss", "valid"]
    for row in rows:
        line = _row_line(text, row)
        cells = [cell.strip() for cell in line.strip("│").split("│")]
        assert cells == [row.label, f"{row.rps:,.0f}", _interval(row),
                         {"different": "!=", "equivalent": "~=", "unresolved": "?"}.get(row.next_verdict or "", ""),
                         f"{row.cpu_ms_per_req:.3f}", f"{row.rss_mb:,.0f}", "yes" + (" !1" if row.checks else "")]
    assert "More columns: Type, Workers, Tie, CPU/req ratio, P50 ms, P99 ms, Errors, #DB, Keep-alive" in text


def test_a_narrower_terminal_drops_the_least_essential_columns_first(rows: tuple[Row, ...]) -> None:
    kept = {width: [c.name for c in fit(TableInfo(rows), width).columns] for width in (55, 60, 70, 80, 86, 120)}
    assert kept[120] == ["stack", "rps", "ratio", "next", "cpu_ms_per_req", "rss", "valid"]
    assert kept[86] == ["stack", "rps", "ratio", "next", "cpu_ms_per_req", "valid"]  # memory first
    assert kept[80] == ["stack", "rps", "ratio", "next", "valid"]  # then CPU per request
    assert kept[70] == ["stack", "rps", "ratio", "valid"]  # the verdict against the next row
    assert kept[60] == ["stack", "ratio", "valid"]  # req/s
    assert kept[55] == ["stack", "ratio"]  # validity; never these two
    assert ESSENTIAL[:2] == ("stack", "ratio")


def test_too_narrow_for_the_stack_its_label_folds_and_the_interval_stays_whole(
        results: ResultSet, rows: tuple[Row, ...]) -> None:
    text = render_terminal(results, 40)
    table = [line for line in text.splitlines() if line.startswith(("│", "┃", "┏", "└"))]
    assert max(len(line) for line in table) <= 40 and "…" not in text
    cells = [line.split("│")[2].strip() for line in table if line.startswith("│")]
    assert all(_interval(row) in cells for row in rows)
    assert "flask:gunicorn-" in text and "meinheld" in text  # the longest label, over two lines


def test_wide_shows_every_terminal_column_whole_however_wide(results: ResultSet, rows: tuple[Row, ...]) -> None:
    text = render_terminal(results, 100, wide=True)
    assert [c.name for c in fit(TableInfo(rows), 100, wide=True).columns] == [
        c.name for c in shown(Format.TERMINAL, TableInfo(rows))]
    assert "Keep-alive" in text and "Tie" in text and "Workers" in text and "More columns" not in text
    assert "…" not in text
    for row in rows:
        assert _interval(row) in _row_line(text, row)


def test_report_and_a_run_print_at_the_terminals_width(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    assert main(["report", str(DEFAULT_RUN)]) == 0
    narrow = capsys.readouterr().out
    assert max(len(line) for line in narrow.splitlines()) <= 100 and "Keep-alive ┃" not in narrow
    assert main(["report", str(DEFAULT_RUN), "--wide"]) == 0
    assert "Keep-alive ┃" in capsys.readouterr().out
    assert render_terminal_for(DEFAULT_RUN) == narrow  # the run's end-of-run table
    assert "Keep-alive ┃" in render_terminal_for(DEFAULT_RUN, wide=True)
    assert main(["report", str(DEFAULT_RUN), "--wide", "-o", str(tmp_path / "table.txt")]) == 0
    assert "Keep-alive ┃" in (tmp_path / "table.txt").read_text()


@pytest.mark.parametrize("command", [["run"], ["sweep"], ["calibrate"], ["app", "--app", "m:app"], ["report", "d"]])
def test_every_command_that_prints_the_table_takes_wide(command: list[str]) -> None:
    parser = build_parser()
    assert parser.parse_args([*command, "--wide"]).wide is True
    assert not parser.parse_args(command).wide
