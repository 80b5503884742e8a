"""scripts/seed-runs' seed 002: every row of the seed's table planned often enough for an interval,
within the budget the script gives it (issue 46 item 8)."""

import re
import shlex
from pathlib import Path

import pytest

from pywebbench.catalog.registry import Catalog, build_catalog
from pywebbench.jobs.execute import points_of
from pywebbench.plan.budgeting import estimate_seconds
from pywebbench.plan.knobs import knob_args
from pywebbench.plan.presets import get_preset, preset_options
from pywebbench.plan.sessions import make_plan
from pywebbench.plan.sources import from_sources
from pywebbench.report.pages.seeds import seed002
from support.seed_runs import Point, write_run

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "seed-runs"
WINDOWS_FOR_AN_INTERVAL = 3
"""stats.ratio_ci needs two windows a side; three launches, so that one window lost to a check
still leaves an interval."""


def _entry(table: str, preset: str) -> str:
    """The value of `[preset]=...` in one of the script's `declare -A TABLE=(...)` blocks."""
    block = re.search(rf"declare -A {table}=\((.*?)\n\)", SCRIPT.read_text(), re.S)
    assert block is not None, f"scripts/seed-runs has no {table} table"
    found = re.search(rf"\[{preset}\]=(\"[^\"]*\"|\S+)", block.group(1))
    assert found is not None, f"scripts/seed-runs' {table} has no {preset}"
    return found.group(1).strip('"')


def _minutes(text: str) -> float:
    assert text.endswith("m"), text
    return float(text[:-1])


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog()


def test_seed002_runs_by_restarts_with_a_bounded_number_of_rounds() -> None:
    args = shlex.split(_entry("METHOD", "seed002"))
    assert args[:2] == ["--method", "restart"]
    assert "--max-rounds" in args


def test_seed002_plans_every_row_of_the_seed_enough_times_within_its_budget(catalog: Catalog) -> None:
    preset = get_preset("seed002")
    args = shlex.split(_entry("METHOD", "seed002"))
    rounds = int(args[args.index("--max-rounds") + 1])
    budget_s = _minutes(_entry("BUDGET", "seed002")) * 60
    options = from_sources(config_file=None, environ={}, flags={**preset_options(preset), "method": "restart"})
    plan = make_plan(catalog, options, (0, 1), points_of(knob_args(preset.grid)), rounds=range(1, rounds + 1))
    windows: dict[tuple[str, int | None], int] = {}
    for trial in plan.trials:
        windows[(trial.stack_id, trial.threads)] = windows.get((trial.stack_id, trial.threads), 0) + 1
    rows = {(f.stack, dict(f.where).get("threads")) for f in preset.published}
    assert len(rows) == 11  # aiohttp (the baseline) and the seed's 10 rows it is compared with
    assert {row: windows.get(row, 0) for row in rows} == {row: rounds for row in rows}
    assert rounds >= WINDOWS_FOR_AN_INTERVAL
    assert len(plan.trials) == 11 * rounds  # nothing measured twice in a round (the interleaved sweep's 32)
    assert estimate_seconds(plan, options) <= budget_s


def test_seed002_page_from_restarts_gives_every_row_an_interval(tmp_path: Path) -> None:
    """What the run scripts/seed-runs makes reads on the page: each of the seed's 10 rows against
    aiohttp with an interval (Welch's t over both sides' windows), none unresolved or unmeasured."""
    aiohttp = "aiohttp:gunicorn-aiohttp"
    gthread = ((10, 90), (20, 170), (50, 230), (100, 450), (200, 440), (400, 430), (800, 420), (1000, 400))
    write_run(tmp_path, "seed002", [
        Point(aiohttp, "upstream", 1500), Point("flask:gunicorn-gevent", "upstream", 400),
        Point("flask:gunicorn-meinheld", "upstream", 20),
        *(Point("flask:gunicorn-gthread", "upstream", rps, threads=t) for t, rps in gthread),
    ], baseline=aiohttp, method="restart", rounds=4)
    text = seed002.render(tmp_path)
    table = text[text.index("### Throughput on upstream"):text.index("Against `")]
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert len(rows) == 11
    assert all(re.search(r"\| \d\.\d\d \[\d\.\d\d, \d\.\d\d\] \|", line) for line in rows), table
    assert "no interval" not in table and "not measured" not in table
    said = text[text.index("Against `"):text.index("### What the seed said")]
    assert said.count("\n- ") == 10 and "unresolved" not in said and "not measured" not in said
