"""A tuning run's answer in its results file: read back whole, rendered by `report`, gated by `compare`."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path

import pytest

from pywebbench.analyze.compare import compare_results
from pywebbench.analyze.ratesearch import Capacity
from pywebbench.analyze.tuning import Tuning, decide_capacity, rank, tuning_of
from pywebbench.analyze.tuning_search import ClassSpace, Stage
from pywebbench.core.errors import UserError
from pywebbench.report.formats import renderer
from pywebbench.results.model import ResultSet
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header

SYNC = ClassSpace("flask:gunicorn-sync", "Gunicorn", "sync", threaded=False, single_process=False)
ONE, TWO = SYNC.config(1, 1), SYNC.config(2, 1)
DEPLOY = "gunicorn --bind 0.0.0.0:8000 --workers 2 app_flask:wsgi"


def _tuning(two: Capacity) -> Tuning:
    stage = Stage("workers", (ONE, TWO), (ONE, TWO))
    outcome = decide_capacity(stage, {ONE: Capacity(400.0, 420.0, (), "resolved"), TWO: two}, {})
    return Tuning("p99<100ms", "hello", ("workers 1..3",), rank([outcome]), (("flask:gunicorn-sync", "workers", 2),),
                  deploy=((TWO.label, DEPLOY),), budget_s=60.0, notes=("capacity: a note",))


def _recorded(tmp_path: Path, name: str, tuning: Tuning) -> ResultSet:
    run_dir = tmp_path / name
    writer = ResultsWriter(results_path(run_dir), header())
    writer.add_tuning(asdict(tuning))
    writer.finish("complete")
    writer.close()
    return load_results(run_dir)


def test_the_answer_reads_back_as_the_engine_returned_it(tmp_path: Path) -> None:
    tuning = _tuning(Capacity(800.0, 840.0, (), "resolved"))
    results = _recorded(tmp_path, "run", tuning)
    assert tuning_of(results) == tuning
    assert tuning_of(load_results(tmp_path / "run")) is not None


def test_report_leads_with_the_tuning_table_in_every_table_format(tmp_path: Path) -> None:
    results = _recorded(tmp_path, "run", _tuning(Capacity(800.0, 840.0, (), "resolved")))
    for name in ("terminal", "markdown", "html"):
        text = renderer(name)(results)
        title = "tuning: capacity under p99<100ms" if name == "terminal" else "tuning: capacity under p99&lt;100ms"
        assert title in text, name
        assert DEPLOY in text, name


def test_a_malformed_tuning_record_is_one_line(tmp_path: Path) -> None:
    results = _recorded(tmp_path, "run", _tuning(Capacity(800.0, 840.0, (), "resolved")))
    broken = ResultSet(results.header, (), tuning={"objective": "p99<100ms"})
    with pytest.raises(UserError, match="does not read as a tuning answer"):
        tuning_of(broken)


def test_the_gate_fails_on_a_capacity_whose_bracket_lies_below_the_old_one(tmp_path: Path) -> None:
    before = _recorded(tmp_path, "before", _tuning(Capacity(800.0, 840.0, (), "resolved")))
    lower = _recorded(tmp_path, "lower", _tuning(Capacity(600.0, 630.0, (), "resolved")))
    found = compare_results(before, lower).regressions(0.05)
    assert [(r.change.stack, r.figure) for r in found] == [(TWO.label, "capacity")]
    assert found[0].delta == pytest.approx(-0.25)
    assert "search brackets allow after/before [0.714, 0.787]" in found[0].line


def test_the_gate_passes_overlapping_brackets_a_small_change_and_a_search_that_ran_off_the_top(
        tmp_path: Path) -> None:
    before = _recorded(tmp_path, "before", _tuning(Capacity(800.0, 840.0, (), "resolved")))
    overlapping = _recorded(tmp_path, "overlap", _tuning(Capacity(780.0, 820.0, (), "resolved")))
    assert compare_results(before, overlapping).regressions(0.01) == ()
    small = _recorded(tmp_path, "small", _tuning(Capacity(770.0, 795.0, (), "resolved")))
    assert compare_results(before, small).regressions(0.05) == ()  # 3.75% down: under the threshold
    assert compare_results(before, small).regressions(0.03) != ()
    unbounded = _recorded(tmp_path, "top", _tuning(Capacity(600.0, None, (), "max-rate")))
    assert compare_results(before, unbounded).regressions(0.05) == ()  # it may hold far higher


def test_a_lost_capacity_is_a_regression_and_other_objectives_are_not_compared(tmp_path: Path) -> None:
    before = _recorded(tmp_path, "before", _tuning(Capacity(800.0, 840.0, (), "resolved")))
    lost = _recorded(tmp_path, "lost", _tuning(Capacity(None, 100.0, (), "floor")))
    assert [r.figure for r in compare_results(before, lost).regressions(0.05)] == ["capacity"]
    other = _tuning(Capacity(100.0, 110.0, (), "resolved"))
    other = Tuning("p99<50ms", other.workload, other.bounds, other.ranked, other.stages)
    assert compare_results(before, _recorded(tmp_path, "other", other)).capacities == ()
