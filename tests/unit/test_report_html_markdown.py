"""Every report format from a stored results file: the HTML page (offline, escaped, one plotly
bundle, a table per cell, charts for each cell and sweep), Markdown, and the CSV/JSON columns."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

import pytest
from plotly.offline import get_plotlyjs  # type: ignore[import-untyped]

from pywebbench.measure.checks import advice
from pywebbench.report.formats import FORMATS, renderer
from pywebbench.results.model import ResultSet
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.results_fixture import (
    DB_CONNECTIONS,
    HELLO_STACKS,
    HOSTILE_FRAMEWORK,
    HOSTILE_STACK,
    OPEN_LOOP_RATES,
    SATURATED_CHECK,
    header,
    hostile_trial,
    write_results,
)

# hello (closed loop), hello at each open-loop rate, db at each connection count.
CELLS = 1 + len(OPEN_LOOP_RATES) + len(DB_CONNECTIONS)


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> ResultSet:
    run_dir = write_results(tmp_path_factory.mktemp("run"), [hostile_trial()])
    return load_results(run_dir)


@pytest.fixture(scope="module")
def html(results: ResultSet) -> str:
    return renderer("html")(results)


@pytest.fixture(scope="module")
def markdown(results: ResultSet) -> str:
    return renderer("markdown")(results)


@dataclass
class Table:
    title: str
    headers: list[tuple[str, str | None]] = field(default_factory=list)
    """(text, aria-sort)."""
    rows: list[list[tuple[str, str]]] = field(default_factory=list)
    """Each stack's measures row as (text, data-sort) per cell."""
    checks: list[str] = field(default_factory=list)


class Page(HTMLParser):
    """The parts of the report the tests read: external references, cell tables, chart divs."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.external: list[str] = []
        self.tables: list[Table] = []
        self.charts = 0
        self.captions: list[str] = []
        self._stack: list[str] = []
        self._text: list[str] | None = None
        self._sort: str = ""
        self._in_checks = False
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        classes = (a.get("class") or "").split()
        if tag in ("script", "img", "iframe") and a.get("src") or tag == "link" and a.get("href"):
            self.external.append(a.get("src") or a.get("href") or "")
        if tag == "section" and "cell" in classes:
            self.tables.append(Table(""))
        if tag == "div" and "plotly-graph-div" in classes:
            self.charts += 1
        if tag == "tr" and "checks" in classes:
            self._in_checks = True
        if tag == "tr" and "measure" in classes:
            self.tables[-1].rows.append([])
        if tag in ("h2", "th", "td", "figcaption") or self._in_checks and (tag == "summary" or "check" in classes
                                                                            and tag == "div"):
            self._text, self._sort = [], a.get("data-sort") or ""
            self._stack.append(tag)
            if tag == "th" and self.tables and not self.tables[-1].rows:
                self.tables[-1].headers.append(("", a.get("aria-sort")))

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr":
            self._in_checks = False
        if self._stack and self._stack[-1] == tag and self._text is not None:
            self._stack.pop()
            text = " ".join("".join(self._text).split())
            if tag == "h2" and self.tables and not self.tables[-1].title:
                self.tables[-1].title = text
            elif tag == "th" and self.tables and not self.tables[-1].rows:
                self.tables[-1].headers[-1] = (text, self.tables[-1].headers[-1][1])
            elif tag == "td" and not self._in_checks and self.tables:
                self.tables[-1].rows[-1].append((text, self._sort))
            elif tag in ("div", "summary"):  # a kind of check summed up: a line, or a fold of windows
                self.tables[-1].checks.append(text)
            elif tag == "figcaption":
                self.captions.append(text)
            self._text = None

    def handle_data(self, data: str) -> None:
        if self._text is not None:
            self._text.append(data)


def _table(page: Page, prefix: str) -> Table:
    return next(t for t in page.tables if t.title.startswith(prefix))


@pytest.mark.parametrize("name", sorted(set(FORMATS) - {"published", "ranking"}))  # these two: own tests
def test_every_format_renders_the_stored_run(results: ResultSet, name: str) -> None:
    text = renderer(name)(results)
    assert "Go net/http" in text or "go:net-http" in text
    assert "Starlette" in text or "starlette:uvicorn" in text  # the terminal names stacks by their labels


def test_html_needs_no_network(html: str) -> None:
    page = Page(html)
    assert page.external == []  # nothing fetched: no script src, no stylesheet link, no image
    own = html.replace(get_plotlyjs(), "")  # plotly.js itself holds map attribution links, never followed here
    for marker in ("http://", "https://", "@import", "url("):
        assert marker not in own


def test_html_embeds_plotly_once(html: str) -> None:
    bundle = get_plotlyjs()
    assert html.count(bundle[:200]) == 1
    assert html.count("<script") == html.count("</script>")


def test_html_escapes_stack_names(html: str) -> None:
    assert "<script>alert(" not in html
    assert "<img src=x" not in html
    assert "<b>Bold</b>" not in html
    assert "&lt;script&gt;alert(" in html
    page = Page(html)
    hello = _table(page, "hello - 100 connections - wrk")
    frameworks = [row[0][0] for row in hello.rows]
    assert HOSTILE_FRAMEWORK in frameworks  # escaped in the source, shown as written
    assert any("<i>not</i> markup" in check for check in hello.checks)


def test_html_has_a_table_per_cell_with_every_stack(html: str) -> None:
    page = Page(html)
    assert len(page.tables) == CELLS
    hello = _table(page, "hello - 100 connections - wrk")
    titles = [text for text, _ in hello.headers]
    assert titles[:6] == ["Framework", "Server", "Type", "Workers", "Req/s", "Ratio"]
    for column in ("P50 ms", "P90 ms", "P99 ms", "Errors", "#DB", "CPU ms/req", "CPU %", "RSS MB",
                   "Keep-alive", "Valid / checks"):
        assert column in titles
    assert dict(hello.headers)["Req/s"] == "descending"  # summarize's order, marked for the sort script
    servers = [row[1][0] for row in hello.rows]
    for stack_id in [*HELLO_STACKS, "sanic:sanic", HOSTILE_STACK]:
        assert any(server.endswith(stack_id) for server in servers), stack_id
    rps = titles.index("Req/s")
    sort_keys = [row[rps][1] for row in hello.rows]
    measured = [float(k) for k in sort_keys if k]
    assert measured == sorted(measured, reverse=True) and sort_keys[-1] == ""  # unavailable sanic last
    go = next(row for row in hello.rows if row[1][0].endswith("go:net-http"))
    # the repeats under the number; a median of three repeats has no 95% interval to show
    assert "[" not in go[rps][0] and "n=3" in go[rps][0]
    assert go[titles.index("CPU ms/req")][0] == "0.029"
    assert go[titles.index("RSS MB")][0] == "12"
    assert "1 check" in go[titles.index("Valid / checks")][0]


def test_html_sums_up_each_kind_of_check_and_gives_its_advice_once(html: str) -> None:
    hello = _table(Page(html), "hello - 100 connections - wrk")
    assert "(!) generator-saturated in 3 of 3 windows, wrk at 98% of 1 CPU" in hello.checks
    db = _table(Page(html), "db - 100 connections")
    assert "(!) errors in 2 of 2 windows, 41 failed requests" in db.checks
    # The windows' own sentences fold under their line; each kind's advice is said once, under Notes.
    fold = html[html.index("<summary>(!) generator-saturated in 3 of 3 windows"):]
    assert fold.index(SATURATED_CHECK) < fold.index("</details>")
    assert "(3 windows)" in fold[:fold.index("</details>")]
    for check in (SATURATED_CHECK, "errors: 41 of"):
        hint = advice(check)
        assert hint and html.count(hint.replace("<", "&lt;").replace(">", "&gt;")) == 1
        assert html.index(hint.split(",")[0]) > html.index('<section id="notes"')


def test_html_charts_each_cell_and_each_sweep(html: str) -> None:
    page = Page(html)
    # Per cell: req/s, latency spectrum, CPU per request; then the db connections sweep and the open-loop curve.
    assert page.charts == 3 * CELLS + 2
    assert any(c.startswith("db: req/s and p99 against connections query delay 20 ms") for c in page.captions)
    assert any(c.startswith("hello: open loop, latency against offered rate") for c in page.captions)
    assert html.count('"arrayminus"') >= CELLS  # req/s bars carry their asymmetric intervals


def test_html_header_describes_the_run(html: str, results: ResultSet) -> None:
    for fact in (results.header.run_id, results.header.machine.cpu_model, "wrk 4.2.0", "pgbouncer 1.18.0",
                 "pool_mode", "Complete", "flask==3.0.3"):
        assert fact in html, fact


def test_html_is_the_same_for_the_same_results(html: str, results: ResultSet) -> None:
    assert renderer("html")(results) == html


def test_incomplete_and_empty_runs_render(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.close()
    empty = load_results(tmp_path)
    assert "Incomplete" in renderer("html")(empty)
    assert "incomplete" in renderer("markdown")(empty)


def test_markdown_has_a_table_per_cell_and_notes(markdown: str) -> None:
    lines = markdown.splitlines()
    assert lines[0].startswith("**pywebbench run `20261121-154000`** - complete - 49 trials")
    headings = [line for line in lines if line.startswith("### ")]
    assert len(headings) == CELLS + 1 and headings[-1] == "### Notes"
    start = lines.index(next(h for h in headings if h.startswith("### hello - 100 connections - wrk")))
    table = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        table.append(line)
    columns = table[0].count(" | ") + 1
    assert "Req/s [95% CI]" in table[0] and "Ratio [95% CI]" in table[0] and "CPU ms/req" in table[0]
    assert len(table) == 2 + len(HELLO_STACKS) + 2  # header, rule, stacks, sanic, the hostile one
    for line in table:
        assert line.replace("\\|", "").count(" | ") + 1 == columns, line  # pipes in names are escaped
    go = next(line for line in table if "Go net/http" in line)
    assert "[" in go and "0.029" in go and "generator-saturated" in go
    assert "&lt;img src=x" in markdown and "<img" not in markdown
    notes = markdown[markdown.index("### Notes"):]
    assert "(!) `go:net-http` (hello, 100 connections): generator-saturated in 3 of 3 windows, wrk at 98% of 1 CPU" \
        in notes  # a line per kind of check, the windows summed up
    assert SATURATED_CHECK not in notes
    assert "**generator-saturated**: the load generator used all of its CPUs" in notes
    assert "sanic 23.12 could not be installed" in notes


def test_csv_carries_intervals_resources_and_open_loop(results: ResultSet) -> None:
    rows = list(csv.DictReader(io.StringIO(renderer("csv")(results))))
    for column in ("rps_ci_low", "rps_ci_high", "ratio_ci_low", "ratio_ci_high", "rps_min", "rps_max", "p95_ms",
                   "p999_ms", "cpu_ms_per_req", "cpu_percent", "rss_mb", "rate", "uncorrected_p99_ms",
                   "aggregation", "checks"):
        assert column in rows[0], column
    go = next(r for r in rows if r["stack"] == "go:net-http")
    assert go["rps_ci_low"] == go["rps_ci_high"] == ""  # a median of three repeats: no 95% interval
    assert float(go["rps_min"]) <= float(go["rps"]) <= float(go["rps_max"])
    assert float(go["ratio_ci_low"]) <= float(go["ratio"]) <= float(go["ratio_ci_high"])
    assert go["cpu_ms_per_req"] == "0.029" and go["rss_mb"] == "11.5" and go["aggregation"] == "median"
    assert go["checks"] == SATURATED_CHECK and go["rate"] == ""
    behind = next(r for r in rows if r["stack"] == "flask:gunicorn-sync" and r["rate"] == "4000.0")
    assert float(behind["p99_ms"]) > 10 * float(behind["uncorrected_p99_ms"])  # the queue the uncorrected hides


def test_json_rows_carry_the_new_columns(results: ResultSet) -> None:
    document = json.loads(renderer("json")(results))
    assert len(document["trials"]) == len(results.trials)
    go = next(r for r in document["rows"] if r["stack"] == "go:net-http")
    assert go["rps_ci_low"] is None and go["cpu_ms_per_req"] == 0.029 and go["p999_ms"] is not None
