"""The `published` report: a preset's run beside the figures its seed published."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pywebbench.cli import main
from pywebbench.core.errors import UserError
from support.fake_loadgen import synthetic_result
from pywebbench.plan.presets import get_preset
from pywebbench.report.formats import renderer
from pywebbench.report.published import render_published
from pywebbench.results.model import ResultSet, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, stack

PRESET = "seed004"


def _trial(stack_id: str, workload: str, stack_cpus: int, round_no: int, rps: float,
           p50_ms: float = 10.0) -> TrialResult:
    cpus = tuple(range(1, 1 + stack_cpus))
    spec = TrialSpec(f"r{round_no}-{stack_id}-{workload}-s{stack_cpus}", stack_id, workload, 100, 2.0, 1.0,
                     round_no, "ab", workers=3 * stack_cpus, stack_cpus=cpus, loadgen_cpus=(0,))
    return TrialResult(spec, stack(stack_id), TrialStatus.OK, "2026-11-21T00:00:00+00:00",
                       "2026-11-21T00:00:03+00:00", load=synthetic_result(rps, 2.0, p50_ms=p50_ms), keepalive=False)


def _write(run_dir: Path, options: dict[str, Any], trials: list[TrialResult]) -> ResultSet:
    writer = ResultsWriter(results_path(run_dir), replace(header(), options=options))
    for t in trials:
        writer.add_trial(t)
    writer.finish("complete")
    writer.close()
    return load_results(run_dir)


@pytest.fixture()
def seed004_run(tmp_path: Path) -> Path:
    """Part of seed004 measured: some published points have a measurement, some do not."""
    trials = [
        # nginx static on 1 CPU, two repeats: the mean (seed 004's aggregation) is 1,050 req/s
        _trial("nginx:static", "static", 1, 1, 1_000.0),
        _trial("nginx:static", "static", 1, 2, 1_100.0),
        # template measured on 2 CPUs only; the seed published its 1-CPU figure
        _trial("flask:gunicorn-meinheld", "template", 2, 1, 870.0),
        # api: synthetic p95 = 1.9 x p50
        _trial("flask:gunicorn-sync", "api", 1, 1, 50.0, p50_ms=1_000.0),
        _trial("flask:gunicorn-meinheld", "api", 2, 1, 130.0, p50_ms=400.0),
    ]
    _write(tmp_path, {"preset": PRESET, "aggregation": "mean", "connections": 100}, trials)
    return tmp_path


def _table(text: str) -> dict[tuple[str, str, str], list[str]]:
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("| Stack"):
            stack_id, workload, point, *cells = (c.strip() for c in line.strip("|").split("|"))
            rows[(stack_id, workload, point)] = cells
    return rows


def test_each_published_figure_stands_beside_the_measured_one(seed004_run: Path) -> None:
    text = render_published(load_results(seed004_run))
    lines = text.splitlines()
    assert lines[0].startswith("Measured here (run run1, preset `seed004`) vs published")
    assert get_preset(PRESET).published_from in lines[0]
    assert "| Stack | Workload | Point | rps | p95_ms |" in lines
    assert _table(text) == {
        ("nginx:static", "static", "stack_cpus=1"): ["1,200 / 1,050", ""],
        ("nginx:static", "static", "stack_cpus=2"): ["2,800 / -", ""],
        ("flask:gunicorn-meinheld", "template", "stack_cpus=1"): ["530 / -", ""],
        ("flask:gunicorn-sync", "api", "stack_cpus=1"): ["", "2,000 / 1,900"],
        ("flask:gunicorn-meinheld", "api", "stack_cpus=2"): ["", "810 / 760"],
    }


def test_a_figure_of_a_grid_point_not_measured_shows_no_measurement(seed004_run: Path) -> None:
    # The 2-CPU template measurement is not the published 1-CPU figure's counterpart.
    rows = _table(render_published(load_results(seed004_run)))
    assert rows[("flask:gunicorn-meinheld", "template", "stack_cpus=1")][0].endswith("/ -")
    assert not any("870" in cell for cells in rows.values() for cell in cells)


def test_the_report_command_renders_it(seed004_run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert renderer("published") is render_published
    assert main(["report", str(seed004_run), "--format", "published"]) == 0
    assert capsys.readouterr().out == render_published(load_results(seed004_run))


@pytest.mark.parametrize("options", [{"connections": 100}, {"connections": 100, "preset": None}],
                         ids=["no preset key", "preset null"])
def test_a_run_without_a_preset_is_a_clear_user_error(tmp_path: Path, options: dict[str, Any],
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    results = _write(tmp_path, options, [_trial("nginx:static", "static", 1, 1, 1_000.0)])
    with pytest.raises(UserError, match=r"not made from a preset \(run --preset NAME\)"):
        render_published(results)
    assert main(["report", str(tmp_path), "--format", "published"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("pywebbench: error: this run was not made from a preset")
    assert len(captured.err.splitlines()) == 1


def test_a_run_naming_an_unknown_preset_is_a_user_error(tmp_path: Path) -> None:
    results = _write(tmp_path, {"preset": "seed999"}, [_trial("nginx:static", "static", 1, 1, 1_000.0)])
    with pytest.raises(UserError, match="unknown preset 'seed999'"):
        render_published(results)
