"""docs/seed-004.md: Flask app servers on a template and an API route, against nginx static, on 1 and 2 CPUs."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages.seeds.page import SeedPage

PAGE = SeedPage(
    number="004",
    title="Seed 004: selecting a Python app server for a REST API",
    presets=("seed004",),
    baseline="flask:gunicorn-sync",
    baseline_why="the seed's charts are images and its text gives only a few figures, none for plain Gunicorn's "
                 "req/s, so it states no ratio; ours are to Flask on Gunicorn's sync worker, the harness's "
                 "baseline, and its words are checked as orderings under *What the seed said*.",
    why_cpu="The seed read req/s and p95 only; with the stack on one or two CPUs, CPU per request says which "
            "server would carry more traffic on the same machine once the CPU is the limit, which req/s at 100 "
            "clients does not.",
    headline_preset="seed004",
)


def render(results: Path) -> str:
    return PAGE.render(results)
