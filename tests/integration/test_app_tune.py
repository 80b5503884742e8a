"""`app --tune --slo` on a Flask app written here (its one POST request sent open loop by oha), and
the CI gate: `compare --fail-on-regression` on two `app` runs, the second made slower on purpose."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from pathlib import Path

import pytest

from pywebbench.results.store import load_results

from .conftest import pywebbench

PROBES = ("--duration", "0.4", "--warmup", "0.2", "--settle", "0.1", "--connections", "20")
"""The search's probes: oha's windows may be shorter than a second, and a 0.4 s probe shows the
plumbing as well as a 1 s one; a 30 s budget buys each candidate about four (70 s bought eight)."""


@pytest.fixture(scope="module")
def tiny_app(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A Flask app whose view spins SPIN_MS milliseconds of CPU when told to (the slowed variant)."""
    root = tmp_path_factory.mktemp("tiny")
    (root / "tinyapp.py").write_text(textwrap.dedent('''
        import os
        import time
        from flask import Flask, jsonify, request

        SPIN_S = float(os.environ.get("SPIN_MS", "0")) / 1000
        app = Flask(__name__)

        @app.get("/")
        def index():
            end = time.perf_counter() + SPIN_S
            while time.perf_counter() < end:
                pass
            return "hello"

        @app.post("/echo")
        def echo():
            return jsonify(request.get_json())
    '''))
    (root / "requirements.txt").write_text("flask==3.1.3\n")
    (root / "item.json").write_text('{"name": "new"}')
    return root


def test_app_tune_with_an_slo_deploys_the_best_as_the_users_module(tiny_app: Path, tmp_path: Path) -> None:
    out = tmp_path / "tune"
    done = pywebbench(
        "app", "--app", "tinyapp:app", "--app-dir", str(tiny_app), "--requirements", str(tiny_app / "requirements.txt"),
        "--request", f"POST /echo @{tiny_app / 'item.json'} Content-Type:application/json", "--expect-body", "new",
        "--server", "gunicorn-sync", "--tune", "--slo", "p99<200ms", "--budget", "30s",
        "--rate", "400", *PROBES, "--seed", "11",  # from 400 req/s: a failing probe within the few
        "--out", str(out), timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "tuning: capacity under p99<200ms - app, budget 30s" in done.stdout
    rows = [line for line in done.stdout.splitlines() if re.match(r"^│ \d │ Gunicorn │ sync", line)]
    assert rows and "=1" in rows[0]
    best_workers = int(re.split(r"\s*│\s*", rows[0])[4])
    deploy = re.search(r"app:gunicorn-sync#w(\d+)t1: (gunicorn --bind 0\.0\.0\.0:8000 --workers (\d+) "
                       r"--worker-class sync .* tinyapp:app)$", done.stdout, re.MULTILINE)
    assert deploy is not None and int(deploy.group(3)) == best_workers, done.stdout
    assert "Deploy commands" not in done.stdout  # the run's default-settings commands are not the answer

    results = load_results(out)
    assert results.complete and results.header.options["tune"] is True
    assert results.header.options["slo"] == "p99<200ms"
    loaded = [t for t in results.trials if t.load is not None]
    assert loaded and all(t.spec.generator == "oha" and t.spec.rate is not None for t in results.trials)
    # oha sent the POST with its body: a GET on /echo would be a 405, a missing body a 400
    assert all(t.load.non_2xx == 0 for t in loaded if t.load is not None)
    tuning = json.loads((out / "tuning.json").read_text())
    assert tuning["objective"] == "p99<200ms" and tuning["deploy"][0][1] == deploy.group(2)
    assert f"`{deploy.group(2)}`" in (out / "tuning.md").read_text()


def _app_run(tiny_app: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    done = pywebbench("app", "--app", "tinyapp:app", "--app-dir", str(tiny_app),
                      "--requirements", str(tiny_app / "requirements.txt"), "--server", "gunicorn-sync",
                      # two launches of one round each: the fewest compare takes an interval from, and
                      # ample for a 4 ms spin (about 0.05 of the unchanged req/s) against a 5% threshold
                      "--rounds", "2", "--rounds-per-launch", "1", "--duration", "1", "--warmup", "0.2",
                      "--settle", "0.1", "--connections", "20", "--out", str(out), *extra, timeout=240)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a busy shared machine flags windows
    assert load_results(out).trials
    return done


def test_the_regression_gate_fails_on_a_slowed_app_and_passes_an_unchanged_one(tiny_app: Path,
                                                                               tmp_path: Path) -> None:
    before, slowed = tmp_path / "before", tmp_path / "slowed"
    _app_run(tiny_app, before)
    _app_run(tiny_app, slowed, "--env", "SPIN_MS=4")  # a few ms of CPU per request: far past 5%

    gate = pywebbench("compare", str(before), str(slowed), "--fail-on-regression", "5%", "--format", "markdown")
    assert gate.returncode == 1, gate.stderr[-3000:]
    lines = [line for line in gate.stderr.splitlines() if line.startswith("regression:")]
    assert any("app:gunicorn-sync app" in line and "req/s" in line for line in lines), gate.stderr
    assert "| app:gunicorn-sync |" in gate.stdout  # the Markdown table, for a pull-request comment

    # An unchanged run against itself: every interval holds 1, nothing to fail on.
    same = pywebbench("compare", str(before), str(before), "--fail-on-regression", "5%")
    assert same.returncode == 0, same.stderr[-3000:]
    assert "regression:" not in same.stderr
