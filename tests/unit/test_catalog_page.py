"""docs/catalog.md: the whole catalog ranked from one committed run, the best of each
concurrency model, and every catalog stack the run could not rank."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from pywebbench.catalog.registry import build_catalog
from pywebbench.report.pages import catalog

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def test_a_ranked_run_gives_every_row_its_interval_verdict_and_the_absent_stacks(tmp_path: Path) -> None:
    # The committed 14-stack duet run stands in for a catalog run: the page reads any ranking.
    shutil.copytree(RESULTS / "rankings" / "default-duet", tmp_path / catalog.FOLDER)
    text = catalog.render(tmp_path)
    assert "| 1 | `bottle:bjoern` | WSGI | Sync | 14.83 [14.32, 15.36] |" in text
    assert "14 stacks; 13 of 13 ratios have an interval" in text
    best = text.split("## The best of each concurrency model")[1].split("\n## ")[0]
    assert "| Sync | 5 | `bottle:bjoern` | 1 |" in best and "| Async-Coroutine | 7 | `starlette:granian` | 2 |" in best
    servers = text.split("## Each server and worker model across frameworks")[1].split("\n## ")[0]
    assert ("| `uvicorn` | 2 | 4.96 | `starlette:uvicorn` 6.94 [6.70, 7.19], #4 | "
            "`fastapi:uvicorn` 2.98 [2.87, 3.08], #6 |") in servers
    frameworks = text.split("## Each framework across servers")[1].split("\n## ")[0]
    assert "| `flask` | 5 | 1.35 | `flask:gunicorn-meinheld` 2.60 [2.50, 2.70], #7 |" in frameworks
    unranked = text.split("## Not ranked")[1]
    assert f"Not in the run ({len(build_catalog().stacks) - 14}):" in unranked
    assert "`django:uwsgi`" in unranked and "`bottle:bjoern`" not in unranked
    assert "*Tie*" not in text  # its tables have no tie column, so the run line does not explain one
    noise = text.split("from its launch's least-squares fit.")[1]
    share, use = (float(x) for x in re.findall(r"(\d+\.\d)%", noise)[:2])
    assert "each side took its equal share of the CPU" in noise and share < use


def test_before_the_run_the_page_shows_its_command(tmp_path: Path) -> None:
    text = catalog.render(tmp_path)
    assert text.rstrip().endswith("Not measured yet.") and "--stack '*:*'" in text


def test_the_same_budget_every_stack_every_round_is_set_beside_the_duet(tmp_path: Path) -> None:
    # The committed 14-stack runs stand in: the duet for the catalog run, the interleaved run
    # at the same budget for its comparison.
    shutil.copytree(RESULTS / "rankings" / "default-duet", tmp_path / catalog.FOLDER)
    shutil.copytree(RESULTS / "rankings" / "default-even", tmp_path / catalog.EVEN_FOLDER)
    section = catalog.render(tmp_path).split("## The same budget, every stack in every round")[1]
    assert catalog.EVEN_COMMAND in section
    rows = [line for line in section.splitlines() if line.startswith("| sparse duet") or line.startswith("| interleaved")]
    assert len(rows) == 2
    duet, even = (row.split(" | ") for row in rows)
    assert duet[1] == "14" and duet[3] == "13" and even[1] == "14"
    assert sum(int(n.strip(" |")) for n in duet[5:8]) == 13  # one verdict per adjacent pair
    assert re.search(r"Kendall's tau-b [+-]\d\.\d\d", section)


def test_without_the_comparison_run_its_section_says_so(tmp_path: Path) -> None:
    shutil.copytree(RESULTS / "rankings" / "default-duet", tmp_path / catalog.FOLDER)
    section = catalog.render(tmp_path).split("## The same budget, every stack in every round")[1]
    assert section.rstrip().endswith("Not measured yet.")
