"""A history as series with steps (analyze/history.py) and its renderers (report/history_view.py)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.history import Figure, Series, history_view
from pywebbench.report.history_view import (
    render_history_html,
    render_history_markdown,
    render_history_terminal,
    short_commit,
)
from pywebbench.results.history import History, HistoryEntry, HistoryRow, Machine

MACHINE = Machine("ci-1", "AMD EPYC", 2, 7_940, "6.8.0", "Ubuntu 24.04", "3.11.7")
HOSTILE = "<script>alert(1)</script>|\x1b[2J"
STEP_AT = 15


def sha(n: int) -> str:
    return hashlib.sha1(str(n).encode()).hexdigest()


def small_history(entries: int = 30) -> History:
    """flask drops 6% at STEP_AT and has no figure at 5; django stays flat; 1% noise."""
    rng = random.Random(1)
    found = []
    for n in range(entries):
        flask_rps = 1000.0 * (0.94 if n >= STEP_AT else 1.0) * (1 + rng.gauss(0, 0.01))
        django_rps = 800.0 * (1 + rng.gauss(0, 0.01))
        rows = (
            HistoryRow("flask:gunicorn-sync", "hello", "100 connections", None if n == 5 else flask_rps,
                       None if n == 5 else (flask_rps * 0.98, flask_rps * 1.02), 1.0, (1.0, 1.0),
                       10.0 + n % 3, 0.5, True),
            HistoryRow(HOSTILE, "hello", "100 connections", django_rps, None, django_rps / flask_rps, None, 9.0, 0.6,
                       True),
        )
        found.append(HistoryEntry(sha(n), "main", "2026-11-25T03:56:03+00:00", "2026-11-25T04:10:00+00:00",
                                  f"run-{n}", f"id-{n}", MACHINE, rows))
    return History(Path("/ci/history.sqlite"), tuple(found), 1)


def flask_of(history: History, figure: Figure) -> Series:
    return next(s for s in history_view(history, figure).series if s.key.stack == "flask:gunicorn-sync")


def test_a_series_per_row_with_its_step_at_the_commit_it_starts() -> None:
    view = history_view(small_history(), Figure.RPS)
    flask = next(s for s in view.series if s.key.stack == "flask:gunicorn-sync")
    django = next(s for s in view.series if s.key.stack == HOSTILE)
    assert len(flask.points) == 30 and flask.points[5].value is None
    assert [(s.position, s.commit) for s in flask.steps] == [(STEP_AT, sha(STEP_AT))]
    assert flask.steps[0].change == pytest.approx(-0.06, abs=0.01)
    assert django.steps == ()
    assert view.machines == ("AMD EPYC, 2 CPUs",) and view.entries == 30


def test_figures_pick_their_column() -> None:
    history = small_history()
    assert flask_of(history, Figure.P99).points[1].value == 11.0
    assert flask_of(history, Figure.CPU).points[0].value == 0.5
    baseline = flask_of(history, Figure.RATIO)
    assert baseline.steps == () and baseline.points[0].interval == (1.0, 1.0)


def test_other_hardware_is_another_series() -> None:
    history = small_history(4)
    other = replace(history.entries[-1], machine=replace(MACHINE, cpu_model="Intel Xeon", hostname="ci-2"))
    view = history_view(replace(history, entries=history.entries[:-1] + (other,)), Figure.RPS)
    assert len(view.series) == 4 and set(view.machines) == {"AMD EPYC, 2 CPUs", "Intel Xeon, 2 CPUs"}


def test_a_new_hostname_on_the_same_hardware_is_the_same_series() -> None:
    history = small_history(4)
    other = replace(history.entries[-1], machine=replace(MACHINE, hostname="ci-2"))
    view = history_view(replace(history, entries=history.entries[:-1] + (other,)), Figure.RPS)
    assert len(view.series) == 2


def test_terminal_shows_each_series_and_marks_the_step() -> None:
    text = render_history_terminal(history_view(small_history(), Figure.RPS))
    assert "history history.sqlite: 30 entries, 2 series, req/s" in text
    step = next(line for line in text.splitlines() if short_commit(sha(STEP_AT)) in line and "step -5.9%" in line)
    assert "(1,002 -> 943, worse)" in step and f"-5.9% at {short_commit(sha(STEP_AT))}" in text
    assert "\x1b" not in text and "\\x1b[2J" in text


def test_markdown_has_a_summary_and_a_table_per_series() -> None:
    text = render_history_markdown(history_view(small_history(), Figure.RPS))
    assert text.count("| # | Commit | Branch | req/s | 95% interval | Valid | Step |") == 2
    step_line = next(line for line in text.splitlines() if "| step " in line)
    assert step_line.startswith(f"| {STEP_AT + 1} | `{short_commit(sha(STEP_AT))}` | main |")
    assert "<script>" not in text and "&lt;script&gt;" in text and "\\|" in text


def test_html_charts_each_series_with_its_step_marked() -> None:
    html = render_history_html(history_view(small_history(), Figure.RPS))
    assert html.startswith("<!DOCTYPE html>") and html.count('class="plotly-graph-div"') == 2
    assert f"at {short_commit(sha(STEP_AT))}" in html  # the annotation on the step's line
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html


def test_an_empty_history_renders() -> None:
    view = history_view(History(Path("h.sqlite"), (), 1), Figure.RPS)
    assert "0 entries" in render_history_terminal(view)
    assert "0 entries" in render_history_markdown(view)
    assert "No series" in render_history_html(view)


def test_short_commit_abbreviates_only_a_sha() -> None:
    assert short_commit("00" * 20) == "0000000000"
    assert short_commit("v1.2.0") == "v1.2.0"


def with_broken_runs(history: History, positions: range) -> History:
    """Entries at `positions` where flask's windows had errors and its req/s collapsed."""
    def broken(entry: HistoryEntry) -> HistoryEntry:
        flask = replace(entry.rows[0], rps=300.0, rps_interval=None, valid=False)
        return replace(entry, rows=(flask, *entry.rows[1:]))
    return replace(history, entries=tuple(broken(e) if n in positions else e for n, e in enumerate(history.entries)))


def test_invalid_points_are_shown_but_left_out_of_the_steps() -> None:
    history = with_broken_runs(small_history(), range(8, 11))
    flask = flask_of(history, Figure.RPS)
    assert [s.position for s in flask.steps] == [STEP_AT]
    counted = with_broken_runs(small_history(), range(8, 11))
    counted = replace(counted, entries=tuple(replace(e, rows=tuple(replace(r, valid=None) for r in e.rows))
                                             for e in counted.entries))
    # Counted, their collapse swamps the t-test and the real step is lost.
    assert [s.position for s in flask_of(counted, Figure.RPS).steps] != [STEP_AT]
    assert flask.points[9].value == 300.0 and not flask.points[9].counted
    markdown = render_history_markdown(history_view(history, Figure.RPS))
    assert markdown.count("| NO: left out |") == 3
    assert "invalid (left out)" in render_history_html(history_view(history, Figure.RPS))


def test_validity_not_recorded_counts_as_it_did_before() -> None:
    history = small_history()
    unknown = replace(history, entries=tuple(replace(e, rows=tuple(replace(r, valid=None) for r in e.rows))
                                             for e in history.entries))
    assert [s.position for s in flask_of(unknown, Figure.RPS).steps] == [STEP_AT]
    assert "| ? |" in render_history_markdown(history_view(unknown, Figure.RPS))
