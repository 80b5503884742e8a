"""The checks summed up per row (report/check_summary.py): one line per kind of check and row, with
how many of its windows it flagged and the range of the figure its sentences carry, in the
terminal, Markdown and HTML alike. The sentences are real ones, from committed results files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pywebbench.analyze.rows import Row, summarize
from pywebbench.measure.checks import advice
from pywebbench.report.check_summary import check_lines, figure_range, summarize_checks
from pywebbench.report.formats import renderer
from pywebbench.report.html import render_html
from pywebbench.report.markdown import render_markdown
from pywebbench.report.terminal import render_terminal
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"
BUSY_RUN = RESULTS / "ci-gate" / "one-run-0us" / "4"
"""A gate run on a busy machine: two rows of 43 windows, 23 of them flagged busy-machine."""

# Recorded sentences, each from the committed results file named beside it.
LITTLES_LAW = (  # rankings/default-auto, bottle:bjoern hello
    "littles-law: 14,984 req/s x 1.4 ms = 21.0 in flight, but 100 connections",
    "littles-law: 11,691 req/s x 1.6 ms = 18.2 in flight, but 100 connections",
    "littles-law: 11,999 req/s x 3.4 ms = 40.9 in flight, but 100 connections",
)
BUSY = (  # ci-gate/one-run-0us/4
    "busy-machine: other processes used 47% of a core",
    "busy-machine: other processes used 106% of a core",
    "busy-machine: other processes used 28% of a core",
)
NEAR_CEILING = (  # rankings/seed003-even
    "near-ceiling: 47,372 req/s is 107% of the 44,394 req/s wrk reaches against nginx static",
    "near-ceiling: 42,036 req/s is 95% of the 44,394 req/s wrk reaches against nginx static",
)
SATURATED = "generator-saturated: wrk used 97% of 1 CPU"  # rankings/seed003-even
ERRORS = (  # rankings/catalog
    "errors: 2 of 3895 (connect 0, read 2, write 0, timeout 0, non-2xx 0)",
    "errors: 33 of 7176 (connect 0, read 33, write 0, timeout 0, non-2xx 0)",
)
NOTHING_COMPLETED = "errors: no request completed in the 10.0s window"  # boot-storm/seed003-before-quiesce
RATE = ("rate-not-reached: 1,283 of 1,600 req/s offered",  # readme-tuning
        "rate-not-reached: 1,217 of 1,600 req/s offered")
OVERLAP = "cpu-overlap: stack and generator both ran on CPU 0"  # seeds/seed004
SPREAD = "spread: 95% interval ±27% over 6 repeats"  # default-run/1


def _windows(*sentences: str) -> list[tuple[str, ...]]:
    return [(s,) for s in sentences]


def test_each_kind_is_one_line_with_its_count_and_its_figure_range() -> None:
    checks = (*LITTLES_LAW, *BUSY)
    lines = summarize_checks(checks, [*_windows(*checks), (), ()], 12)
    assert [line.text for line in lines] == [
        "littles-law in 3 of 12 windows, 18.2-40.9 in flight of 100 connections",
        "busy-machine in 3 of 12 windows, 28-106% of a core",
    ]
    assert lines[0].kind == "littles-law" and lines[0].notes == tuple((s, 1) for s in LITTLES_LAW)


@pytest.mark.parametrize(("sentences", "expected"), [
    (NEAR_CEILING, "95-107% of the 44,394 req/s wrk ceiling"),
    ((SATURATED,), "wrk at 97% of 1 CPU"),
    (ERRORS, "2-33 failed requests"),
    (RATE, "1,217-1,283 of 1,600 req/s reached"),
    (BUSY[:1], "47% of a core"),
])
def test_each_figure_is_read_from_the_shape_measure_checks_writes(sentences: tuple[str, ...], expected: str) -> None:
    kind = sentences[0].split(":")[0]
    assert figure_range(kind, sentences) == expected


def test_a_kind_without_a_figure_or_in_another_shape_keeps_its_count_only() -> None:
    # Every window of a run on shared CPUs says the same sentence: counted per window, not per sentence.
    lines = summarize_checks((OVERLAP,), _windows(*[OVERLAP] * 12), 12)
    assert [(line.text, line.notes) for line in lines] == [("cpu-overlap in 12 of 12 windows", ((OVERLAP, 12),))]
    mixed = (ERRORS[0], NOTHING_COMPLETED)
    assert summarize_checks(mixed, _windows(*mixed), 4)[0].text == "errors in 2 of 4 windows"
    reworded = ("busy-machine: others used 47% of a core", BUSY[0])
    assert summarize_checks(reworded, _windows(*reworded), 4)[0].text == "busy-machine in 2 of 4 windows"
    two_settings = (LITTLES_LAW[0], LITTLES_LAW[1].replace("100 connections", "200 connections"))
    assert figure_range("littles-law", two_settings) == ""  # one range would mix them


def test_a_window_flagged_twice_by_one_kind_counts_once() -> None:
    lines = summarize_checks((NOTHING_COMPLETED, ERRORS[0]), [(NOTHING_COMPLETED, ERRORS[0]), ()], 2)
    assert lines[0].text == "errors in 1 of 2 windows"


def test_the_rows_own_spread_is_said_as_written() -> None:
    lines = summarize_checks((BUSY[0], SPREAD), _windows(BUSY[0]), 6)
    assert [line.text for line in lines] == ["busy-machine in 1 of 6 windows, 47% of a core", SPREAD]
    assert lines[1].notes == ()


def test_without_the_windows_each_distinct_sentence_stands_for_one() -> None:
    assert summarize_checks(LITTLES_LAW, (), 12)[0].text.startswith("littles-law in 3 of 12 windows")


@pytest.fixture(scope="module")
def busy() -> ResultSet:
    return load_results(BUSY_RUN)


def _rows(results: ResultSet) -> tuple[Row, ...]:
    return summarize(results).rows


def test_windows_are_counted_from_the_run_not_from_the_rows_distinct_sentences(busy: ResultSet) -> None:
    for row in _rows(busy):
        assert len(row.checks) == 14  # the row names each distinct sentence once...
        [line] = check_lines(row)
        assert line.text == "busy-machine in 23 of 43 windows, 20-109% of a core"  # ...23 windows wrote them
        assert sum(count for _, count in line.notes) == 23 and len(line.notes) == 14


def test_the_terminal_prints_a_line_per_kind_and_row_and_the_advice_once(busy: ResultSet) -> None:
    text = render_terminal(busy)
    flagged = [line.strip() for line in text.splitlines() if line.strip().startswith("(!)")]
    assert flagged == [f"(!) {row.label} app: busy-machine in 23 of 43 windows, 20-109% of a core"
                       for row in _rows(busy)]
    assert not re.search(r"other processes used \d+%", text)  # no window's own sentence
    assert " ".join(text.split()).count(advice("busy-machine")) == 1
    assert re.search(r"│ yes !1 +│", text)  # one kind of check, one line below


def test_markdown_prints_a_line_per_kind_and_row_and_the_advice_once(busy: ResultSet) -> None:
    text = render_markdown(busy)
    flagged = [line for line in text.splitlines() if line.startswith("- (!)")]
    assert len(flagged) == 2
    assert all(line.endswith(": busy-machine in 23 of 43 windows, 20-109% of a core") for line in flagged)
    assert not re.search(r"other processes used \d+%", text)
    assert text.count("**busy-machine**: ") == 1


def test_html_folds_each_rows_windows_under_its_line(busy: ResultSet) -> None:
    page = render_html(busy, plotly_src="plotly.js")
    folds = re.findall(r'<details class="check"><summary>(.*?)</summary>\s*<ul>(.*?)</ul>', page, re.S)
    assert [summary for summary, _ in folds] == ["(!) busy-machine in 23 of 43 windows, 20-109% of a core"] * 2
    for _, windows in folds:
        items = re.findall(r"<li>(.*?)</li>", windows)
        assert len(items) == 14 and all(i.startswith("busy-machine: other processes used ") for i in items)
    assert page.count(advice("busy-machine")) == 1  # once, under Notes
    assert page.index(advice("busy-machine")) > page.index('<section id="notes"')
    assert "<details" in page and ' open' not in page.split('<section id="run"')[0]  # folded until clicked


def test_every_format_names_each_flagged_kind(busy: ResultSet) -> None:
    for name in ("terminal", "markdown", "html"):
        assert "busy-machine in 23 of 43 windows" in renderer(name)(busy), name
