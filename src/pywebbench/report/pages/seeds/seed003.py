"""docs/seed-003.md: API Star, Bottle, Falcon, Flask, hug on five servers, and Sanic; hello and a CPU-bound endpoint."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages.seeds.page import SeedPage

PAGE = SeedPage(
    number="003",
    title="Seed 003: Python API framework benchmarks, hello and a CPU-bound endpoint",
    presets=("seed003",),
    baseline="flask:gunicorn-sync",
    baseline_why="the seed published req/s only; its ratios here are its req/s over Flask on Gunicorn's sync "
                 "worker in the same table (the best 10 s run for the CPU-bound endpoint, as the seed kept the best "
                 "of its runs). Its CPU-bound table set runs with socket errors apart from clean ones; the "
                 "*Seed's note* and *Errors here* columns keep them apart the same way.",
    why_cpu="The seed's hello figures are the best of five runs at 200 connections; CPU per request says how "
            "much of a server's lead is less work per request and how much is only a different way of queueing.",
    headline_preset="seed003",
)


def render(results: Path) -> str:
    return PAGE.render(results)
