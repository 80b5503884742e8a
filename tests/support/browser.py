"""Debian's headless Chromium for the report's browser tests: opened at SCREEN's size on a page
from disk, every plotly chart drawn before a test reads it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.chrome.webdriver import WebDriver
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
BROWSER_ARGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-extensions", "--no-first-run")
LOAD_TIMEOUT_S = 120  # 5 MB of plotly.js and two dozen charts on a busy 2-core machine
SCREEN = (1400, 1000)


@contextmanager
def opened(page: Path) -> Iterator[WebDriver]:
    """Chromium at SCREEN's window size, the page loaded and every chart drawn."""
    options = Options()
    for arg in BROWSER_ARGS:
        options.add_argument(arg)
    options.binary_location = str(CHROMIUM)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    # An explicit driver path: selenium-manager is never asked, so nothing is downloaded.
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        driver.set_page_load_timeout(LOAD_TIMEOUT_S)
        driver.set_window_size(*SCREEN)
        driver.get(page.as_uri())
        WebDriverWait(driver, LOAD_TIMEOUT_S).until(lambda d: drawn(d) == chart_count(d))
        yield driver
    finally:
        driver.quit()


def chart_count(driver: WebDriver) -> int:
    return len(driver.find_elements(By.CSS_SELECTOR, "div.plotly-graph-div"))


def drawn(driver: WebDriver) -> int:
    """Charts plotly has drawn: its class set and at least one trace inside the SVG."""
    count = driver.execute_script(
        "return Array.from(document.querySelectorAll('div.plotly-graph-div')).filter("
        "d => d.classList.contains('js-plotly-plot') && d.querySelector('svg.main-svg .trace')).length")
    assert isinstance(count, int)
    return count
