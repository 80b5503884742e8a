"""The HTML report in a real browser (Debian's headless Chromium): it loads from disk with no
network, every plotly chart draws, the console stays clean, headers sort the tables, and a run
with many flagged windows keeps its table and first chart on the first screen, each row's
windows folded under one line per kind of check.

PYWEBBENCH_SCREENSHOT=path.png also saves the page's top (run facts, first table, its charts).
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.remote.webelement import WebElement
from selenium.webdriver.support.ui import WebDriverWait

from pywebbench.measure.checks import advice
from pywebbench.report.formats import renderer
from pywebbench.report.html import write_html
from pywebbench.results.store import load_results
from support.browser import SCREEN, opened as _opened
from support.results_fixture import HELLO_STACKS, write_results

HELLO_TITLE = "hello - 100 connections - wrk"
FLAGGED_RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "ci-gate" / "one-run-0us" / "4"
"""A committed run on a busy machine: two rows of 43 windows, 23 of each flagged busy-machine
(one line per window under each row once, 46 in all, so the table ran off the first screen)."""


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run_dir = write_results(tmp_path_factory.mktemp("run"))
    path = run_dir / "report.html"
    path.write_text(renderer("html")(load_results(run_dir)), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def browser(report: Path) -> Iterator[WebDriver]:
    with _opened(report) as driver:
        screenshot = os.environ.get("PYWEBBENCH_SCREENSHOT")
        if screenshot:
            _save_top(driver, Path(screenshot))
        yield driver


def _save_top(driver: WebDriver, path: Path) -> None:
    bottom = driver.execute_script(
        "const r = document.querySelector('section.cell').getBoundingClientRect(); return r.bottom + window.scrollY")
    width = driver.execute_script("return document.documentElement.scrollWidth")
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width, "height": bottom + 16, "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


def _hello_table(driver: WebDriver) -> WebElement:
    for section in driver.find_elements(By.CSS_SELECTOR, "section.cell"):
        if section.find_element(By.TAG_NAME, "h2").text.startswith(HELLO_TITLE):
            return section.find_element(By.CSS_SELECTOR, "table.results")
    raise AssertionError(f"no section titled {HELLO_TITLE}")


def _column(table: WebElement, title: str) -> list[str]:
    """The column's cells, top to bottom, as the sort script reads them (data-sort)."""
    titles = [th.text for th in table.find_elements(By.CSS_SELECTOR, "thead th")]
    index = titles.index(title)
    return [row.find_elements(By.TAG_NAME, "td")[index].get_attribute("data-sort") or ""
            for row in table.find_elements(By.CSS_SELECTOR, "tbody tr.measure")]


def _header(table: WebElement, title: str) -> WebElement:
    return next(th for th in table.find_elements(By.CSS_SELECTOR, "thead th") if th.text == title)


def test_table_has_a_row_per_stack(browser: WebDriver) -> None:
    table = _hello_table(browser)
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr.measure")
    servers = [row.find_elements(By.TAG_NAME, "td")[1].text for row in rows]
    assert len(rows) == len(HELLO_STACKS) + 1  # and the unavailable sanic:sanic
    for stack_id in [*HELLO_STACKS, "sanic:sanic"]:
        assert any(stack_id in server for server in servers), stack_id
    checks = table.find_elements(By.CSS_SELECTOR, "tbody tr.checks .check")
    assert any(c.text.startswith("(!) generator-saturated in 3 of 3 windows") for c in checks)
    notes = browser.find_element(By.ID, "notes")  # each kind's advice once, under the tables
    assert "--loadgen-cpus" in notes.get_attribute("textContent")


def test_every_chart_draws(browser: WebDriver) -> None:
    charts = browser.find_elements(By.CSS_SELECTOR, "div.plotly-graph-div")
    assert len(charts) >= 20
    for chart in charts:
        assert "js-plotly-plot" in (chart.get_attribute("class") or "")
        svg = chart.find_element(By.CSS_SELECTOR, "svg.main-svg")
        assert svg.size["width"] > 300 and svg.size["height"] > 200
    first = _hello_table(browser).find_element(By.XPATH, "ancestor::section//div[contains(@class, 'plotly-graph-div')]")
    bars = first.find_elements(By.CSS_SELECTOR, "g.trace.bars g.point path")
    assert len(bars) == len(HELLO_STACKS)  # one bar per measured stack, none for the unavailable one


def test_no_script_errors_and_no_network(browser: WebDriver) -> None:
    errors = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert errors == []
    fetched = browser.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    assert [url for url in fetched if not url.startswith(("file:", "data:", "blob:"))] == []


def test_clicking_a_header_sorts_and_again_reverses(browser: WebDriver) -> None:
    table = _hello_table(browser)
    before = _column(table, "Req/s")
    measured = [float(v) for v in before if v]
    assert measured == sorted(measured, reverse=True) and before[-1] == ""
    assert _header(table, "Req/s").get_attribute("aria-sort") == "descending"

    _header(table, "Req/s").find_element(By.TAG_NAME, "button").click()
    ascending = _column(table, "Req/s")
    assert [float(v) for v in ascending if v] == sorted(measured)
    assert ascending[-1] == ""  # a stack without a number stays last
    assert _header(table, "Req/s").get_attribute("aria-sort") == "ascending"

    _header(table, "Req/s").click()
    assert [float(v) for v in _column(table, "Req/s") if v] == sorted(measured, reverse=True)
    assert _header(table, "Req/s").get_attribute("aria-sort") == "descending"

    _header(table, "Framework").click()
    frameworks = _column(table, "Framework")
    assert frameworks == sorted(frameworks, key=str.lower)
    assert _header(table, "Framework").get_attribute("aria-sort") == "ascending"
    assert _header(table, "Req/s").get_attribute("aria-sort") == "none"
    # The checks row moved with its stack.
    go = table.find_element(By.XPATH, ".//tbody[.//td[contains(., 'go:net-http')]]")
    assert "generator-saturated" in go.text


@pytest.fixture(scope="module")
def flagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    page = tmp_path_factory.mktemp("flagged") / "report.html"
    write_html(load_results(FLAGGED_RUN), page)  # as `report --format html -o`: plotly.js beside it
    with _opened(page) as driver:
        yield driver


def _rect(driver: WebDriver, element: WebElement) -> dict[str, float]:
    rect = driver.execute_script("const r = arguments[0].getBoundingClientRect(); "
                                 "return {left: r.left, top: r.top, right: r.right, bottom: r.bottom}", element)
    assert isinstance(rect, dict)
    return rect


def test_many_flagged_windows_leave_the_table_and_first_chart_on_the_first_screen(
        flagged: WebDriver, tmp_path: Path) -> None:
    width, height = flagged.execute_script("return [window.innerWidth, window.innerHeight]")
    assert width == SCREEN[0]
    shot = tmp_path / "first-screen.png"
    assert flagged.save_screenshot(str(shot)) and shot.stat().st_size > 10_000
    section = flagged.find_element(By.CSS_SELECTOR, "section.cell")
    table = section.find_element(By.CSS_SELECTOR, "table.results")
    chart = section.find_element(By.CSS_SELECTOR, "figure.chart")
    assert "plotly-graph-div" in chart.get_attribute("innerHTML")
    for element in (table, chart):
        rect = _rect(flagged, element)
        assert 0 <= rect["left"] and rect["right"] <= width and 0 <= rect["top"] and rect["bottom"] <= height, rect
    wrap = section.find_element(By.CSS_SELECTOR, ".table-wrap")
    assert flagged.execute_script("return arguments[0].scrollWidth <= arguments[0].clientWidth", wrap)
    # One line per row and kind of check, not one per flagged window; the advice once, under Notes.
    lines = table.find_elements(By.CSS_SELECTOR, "tr.checks .check")
    assert [line.text for line in lines] == ["(!) busy-machine in 23 of 43 windows, 20-109% of a core"] * 2
    assert advice("busy-machine") not in table.text


def test_a_rows_windows_are_folded_until_clicked(flagged: WebDriver) -> None:
    fold = flagged.find_element(By.CSS_SELECTOR, "section.cell tr.checks details.check")
    windows = fold.find_elements(By.TAG_NAME, "li")
    assert len(windows) == 14  # the distinct sentences of 23 windows, each with its count
    assert fold.get_attribute("open") is None and not any(w.is_displayed() for w in windows)
    before = _rect(flagged, fold)
    fold.find_element(By.TAG_NAME, "summary").click()
    WebDriverWait(flagged, 5).until(lambda d: fold.get_attribute("open") is not None)
    assert all(w.is_displayed() for w in windows)
    assert windows[0].text.startswith("busy-machine: other processes used ")
    assert _rect(flagged, fold)["bottom"] > before["bottom"] + 10 * len(windows)  # the row opened up
    fold.find_element(By.TAG_NAME, "summary").click()  # and folds again
    WebDriverWait(flagged, 5).until(lambda d: fold.get_attribute("open") is None)
    assert not any(w.is_displayed() for w in windows)
