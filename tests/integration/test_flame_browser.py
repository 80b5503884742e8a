"""The HTML report's flame graphs in a real browser (Debian's headless Chromium, 1,400 px wide):
a profiled run's fold opens to a flame graph that fits the page, a screenshot of it holds a drawn
graph (many colours, not one box), and its frames' names are readable (drawn at 10 px or more).

The run is the committed `--profile` run of docs/profiles.md (docs/results/profiles/default):
its results file carries each stack's stacks, so the page is built from it alone.

PYWEBBENCH_SCREENSHOT_FLAME=path.png also saves the screenshot.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By

from pywebbench.report.formats import renderer
from pywebbench.results.store import load_results
from support.browser import SCREEN, opened

PROFILED_RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "profiles" / "default"
READABLE_PX = 10.0
"""The smallest drawn height of a frame's name that reads at arm's length on a laptop screen."""

_COLOURS = """
const done = arguments[arguments.length - 1];
const img = new Image();
img.onload = () => {
  const canvas = document.createElement('canvas');
  canvas.width = img.width; canvas.height = img.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data;
  const seen = new Map();
  for (let i = 0; i < data.length; i += 4) {
    const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    seen.set(key, (seen.get(key) || 0) + 1);
  }
  let most = 0;
  for (const count of seen.values()) most = Math.max(most, count);
  done([img.width, img.height, seen.size, most / (data.length / 4)]);
};
img.onerror = () => done(null);
img.src = 'data:image/png;base64,' + arguments[0];
"""


@pytest.fixture(scope="module")
def flame_page(tmp_path_factory: pytest.TempPathFactory) -> Iterator[WebDriver]:
    path = tmp_path_factory.mktemp("flame") / "report.html"
    path.write_text(renderer("html")(load_results(PROFILED_RUN)), encoding="utf-8")
    with opened(path) as driver:
        fold = driver.find_elements(By.CSS_SELECTOR, "details.flame")[0]
        driver.execute_script("arguments[0].scrollIntoView(); arguments[0].open = true;", fold)
        yield driver


def _graph_rect(driver: WebDriver) -> dict[str, Any]:
    rect = driver.execute_script(
        "const s = document.querySelector('details.flame[open] .flame-graph svg');"
        "const r = s.getBoundingClientRect();"
        "return {x: r.left + window.scrollX, y: r.top + window.scrollY, width: r.width, height: r.height,"
        " page: document.documentElement.scrollWidth};")
    assert isinstance(rect, dict)
    return rect


def test_an_opened_fold_draws_a_flame_graph_that_fits_the_page(flame_page: WebDriver) -> None:
    rect = _graph_rect(flame_page)
    assert rect["page"] <= SCREEN[0], "the page scrolls sideways: the graph does not fit 1,400 px"
    assert 0.8 * SCREEN[0] <= rect["width"] <= SCREEN[0] and rect["height"] > 100
    shot = flame_page.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": rect["x"], "y": rect["y"], "width": rect["width"], "height": rect["height"], "scale": 1}})
    if (keep := os.environ.get("PYWEBBENCH_SCREENSHOT_FLAME")):
        Path(keep).write_bytes(base64.b64decode(shot["data"]))
    colours = flame_page.execute_async_script(_COLOURS, shot["data"])
    assert colours is not None, "the screenshot did not decode"
    width, height, distinct, commonest = colours
    assert (width, height) == (round(rect["width"]), round(rect["height"]))
    # Frames in many colours on a pale ground: not a blank box, not one flat colour
    assert distinct >= 50 and commonest < 0.9, colours


def test_its_frames_names_are_readable_at_1400_px(flame_page: WebDriver) -> None:
    heights = flame_page.execute_script(
        "return Array.from(document.querySelectorAll('details.flame[open] .flame-graph svg g text'))"
        ".filter(t => t.textContent.trim().length >= 3).map(t => t.getBoundingClientRect().height);")
    assert isinstance(heights, list) and len(heights) >= 10, heights
    assert min(heights) >= READABLE_PX, f"frame names drawn {min(heights):.1f} px high"
