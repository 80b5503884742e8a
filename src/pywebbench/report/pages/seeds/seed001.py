"""docs/seed-001.md: apibench-py (Flask on 40 threads vs Starlette vs Go), on SQLite as the seed and on PostgreSQL."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages.seeds.page import SeedPage

PAGE = SeedPage(
    number="001",
    title="Seed 001: Flask vs Starlette vs Go on hello, an external API and a DB read",
    # The sync-client presets are the 'Starlette (sync)' row on its own; seed001 runs it as a variant.
    presets=("seed001", "seed001-postgresql"),
    baseline="flask:gunicorn-gthread",
    baseline_why="the seed compared Starlette with Flask (\"5x faster than Flask\"); its ratios are its req/s "
                 "over Flask's in the same table.",
    why_cpu="The seed's req/s come from 1000 requests on one machine with ab beside the server; CPU per "
            "request says how much of the gap is the server's own work, and whether 'the sync client is 2x "
            "faster' is less work per request or only less waiting.",
    headline_preset="seed001",
)


def render(results: Path) -> str:
    return PAGE.render(results)
