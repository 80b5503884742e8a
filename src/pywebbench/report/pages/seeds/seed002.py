"""docs/seed-002.md: aiohttp vs Flask on gevent, meinheld and 10..1000 threads, calling a slow upstream."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages.seeds.page import SeedPage

PAGE = SeedPage(
    number="002",
    title="Seed 002: aiohttp vs Flask on gevent, meinheld and threads, calling a remote server",
    presets=("seed002",),
    baseline="aiohttp:gunicorn-aiohttp",
    baseline_why="the seed measured everything against aiohttp (\"nothing handled nearly as many requests as "
                 "aiohttp\"); its ratios are requests in 20 s over aiohttp's. The threaded rows ran at their own "
                 "thread counts, a cell aiohttp has no window in, so their ratios are unpaired (Welch's t over "
                 "both sides' windows, none below two windows a side) and read wide.",
    why_cpu="The seed's table counts requests in 20 s with 400 clients waiting on a slow upstream; CPU per "
            "request says which servers spent their CPU on the requests and which on managing threads or "
            "greenlets while they waited.",
    headline_preset="seed002",
)


def render(results: Path) -> str:
    return PAGE.render(results)
