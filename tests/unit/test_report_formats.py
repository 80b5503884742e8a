import csv
import io
import json
from pathlib import Path

import pytest

from pywebbench.errors import UserError
from support.fake_loadgen import synthetic_result
from pywebbench.report.formats import renderer
from pywebbench.results.model import SCHEMA_VERSION, SocketErrors
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
