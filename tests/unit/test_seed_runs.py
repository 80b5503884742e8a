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
