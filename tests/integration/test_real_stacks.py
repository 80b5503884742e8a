"""Real stacks of the three concurrency types, built by uv, under real wrk and ab."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from pywebbench.results.store import load_results

from .conftest import pywebbench

THREE_TYPES = ("flask:gunicorn-sync", "flask:gunicorn-gevent", "starlette:uvicorn")


def test_three_stack_types_under_wrk_are_valid_with_ratios(tmp_path: Path) -> None:
    args = ["run", "--duration", "1", "--warmup", "0.5", "--connections", "20", "--repeats", "1", "--out", str(tmp_path)]
    for stack in THREE_TYPES:
        args += ["--stack", stack]
    done = pywebbench(*args)
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    assert results.complete
    assert {t.spec.stack_id for t in results.trials} == set(THREE_TYPES)
    for trial in results.trials:
        assert trial.valid, (trial.spec.stack_id, trial.error)
        assert trial.load is not None and trial.load.requests > 20  # a loaded CI machine still serves dozens a second
        assert trial.load.latency.at(99.0) is not None
    by_id = {t.spec.stack_id: t for t in results.trials}
    assert by_id["flask:gunicorn-sync"].keepalive is False  # gunicorn's sync worker closes every connection
    assert by_id["starlette:uvicorn"].keepalive is True
    assert len(results.environments) == 3 and all(e.freeze for e in results.environments.values())

    report = pywebbench("report", str(tmp_path), "--format", "csv")
    rows = {r["stack"]: r for r in csv.DictReader(io.StringIO(report.stdout))}
    assert rows["flask:gunicorn-sync"]["ratio"] == "1.0"
    assert float(rows["starlette:uvicorn"]["ratio"]) > 0
    assert rows["flask:gunicorn-gevent"]["type"] == "Async-Greenlet"


def test_ab_fixed_count_gives_the_same_result_type(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "starlette:uvicorn", "--generator", "ab", "--requests", "500",
                      "--connections", "10", "--warmup", "0", "--repeats", "1", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    (trial,) = load_results(tmp_path).trials
    assert trial.valid, trial.error
    assert trial.load is not None and trial.load.generator == "ab" and trial.load.requests == 500
    assert "No ratio" in done.stdout  # the baseline was not in this run


def test_bad_input_fails_before_anything_starts(tmp_path: Path) -> None:
    for args, message in (
        (["run", "--stack", "starlette:gunicorn-sync"], "not a valid pairing"),
        (["run", "--stack", "flask:nosuch"], "unknown server"),
        (["run", "--workload", "nope", "--stack", "flask:gunicorn-sync"], "unknown workload"),
        (["report", str(tmp_path)], "no results file"),
    ):
        done = pywebbench(*args, "--out", str(tmp_path / "x")) if args[0] == "run" else pywebbench(*args)
        assert done.returncode == 2, done.stderr
        assert message in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "x").exists()
