import csv
import io
import json
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from support.fake_loadgen import synthetic_result
from pywebbench.plan.sweep import Knob
from pywebbench.report.formats import renderer
from pywebbench.report.record import knob_column
from pywebbench.results.model import SCHEMA_VERSION, SocketErrors, TrialResult
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, trial

REQUIRED_CSV = ("framework,server,worker_class,type,workers,workload,connections,rps,ratio,"
                "p50_ms,p90_ms,p99_ms,errors,valid").split(",")


@pytest.fixture()
def stored(tmp_path: Path) -> Path:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_trial(trial("flask:gunicorn-sync", 1000.0))
    writer.add_trial(trial("starlette:uvicorn", 2000.0, load=synthetic_result(
        2000.0, 2.0, socket_errors=SocketErrors(read=3))))
    writer.finish("complete")
    writer.close()
    return tmp_path


def test_csv_has_the_promised_columns(stored: Path) -> None:
    text = renderer("csv")(load_results(stored))
    rows = list(csv.DictReader(io.StringIO(text)))
    assert set(REQUIRED_CSV) <= set(rows[0])
    by_stack = {r["stack"]: r for r in rows}
    assert by_stack["starlette:uvicorn"]["ratio"] == "2.0"
    assert by_stack["starlette:uvicorn"]["valid"] == "False"
    assert by_stack["starlette:uvicorn"]["errors"] == "3"
    assert by_stack["flask:gunicorn-sync"]["valid"] == "True"


def test_json_carries_rows_trials_and_the_run(stored: Path) -> None:
    document = json.loads(renderer("json")(load_results(stored)))
    assert document["complete"] is True
    assert len(document["trials"]) == 2
    assert document["run"]["schema_version"] == SCHEMA_VERSION
    assert {r["stack"] for r in document["rows"]} == {"flask:gunicorn-sync", "starlette:uvicorn"}


def test_terminal_table_marks_invalid_trials(stored: Path) -> None:
    text = renderer("terminal")(load_results(stored))
    assert "starlette:uvicorn" in text and "2.00" in text
    assert "NO: ok" not in text
    lines = [line for line in text.splitlines() if "starlette:uvicorn" in line]
    assert "NO" in lines[0]


def test_unknown_format_is_refused() -> None:
    with pytest.raises(UserError, match="unknown report format"):
        renderer("pdf")


def _csv_rows(tmp_path: Path, trials: list[TrialResult]) -> list[dict[str, str]]:
    writer = ResultsWriter(results_path(tmp_path), header())
    for t in trials:
        writer.add_trial(t)
    writer.finish("complete")
    writer.close()
    return list(csv.DictReader(io.StringIO(renderer("csv")(load_results(tmp_path)))))


def _at(t: TrialResult, tag: str, **spec: object) -> TrialResult:
    return replace(t, spec=replace(t.spec, trial_id=f"{t.spec.trial_id}-{tag}", **spec))


@pytest.mark.parametrize(("settings", "column", "shown"), [
    ([{"rtt_s": 0.0}, {"rtt_s": 0.002}], "rtt_ms", ["0.0", "2.0"]),
    ([{"stack_cpus": (1,)}, {"stack_cpus": (1, 2, 3)}], "stack_cpus", ["1", "3"]),
])
def test_trials_that_differ_only_in_a_knob_differ_in_its_column(
        tmp_path: Path, settings: list[dict[str, object]], column: str, shown: list[str]) -> None:
    base = trial("flask:gunicorn-sync", 1000.0)
    rows = _csv_rows(tmp_path, [_at(base, str(i), **s) for i, s in enumerate(settings)])
    assert sorted(r[column] for r in rows) == shown
    measured = {"rps", "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "rps_min", "rps_max", "ratio"}
    differing = {name for name in rows[0] if rows[0][name] != rows[1][name]} - measured
    assert differing == {column}


def test_every_knob_is_a_column_of_the_csv_and_the_json(stored: Path) -> None:
    header_row = renderer("csv")(load_results(stored)).splitlines()[0].split(",")
    json_row = json.loads(renderer("json")(load_results(stored)))["rows"][0]
    for knob in Knob:
        column = knob_column(knob)
        assert column.startswith(knob.value) and column in header_row and column in json_row, knob
    assert header_row.count("workers") == 1 and len(header_row) == len(set(header_row))
