"""Sweeps, resume, calibrate and compare for real: real stacks under real wrk, short windows."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from pywebbench.results.store import load_results, results_path

from .conftest import ROOT, pywebbench

SHORT = ("--duration", "1", "--warmup", "0.3")
# The shortest wrk window (wrk measures whole seconds) after the shortest warm-up and settle
# that still load the server: the tests show the plumbing, not a figure.
BRIEF = ("--duration", "1", "--warmup", "0.2", "--settle", "0.1")
TWO = ("--stack", "flask:gunicorn-sync", "--stack", "starlette:uvicorn")


def test_a_small_real_sweep_lands_in_one_file_with_a_ranking_view(tmp_path: Path) -> None:
    done = pywebbench("sweep", *TWO, *SHORT, "--repeats", "1", "--knob", "connections=2,20", "--seed", "5",
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    assert "plan: 2 stacks x 1 workloads x 2 sweep points x 1 rounds = 4 trials" in done.stderr
    results = load_results(tmp_path)
    assert results.complete and len(results.trials) == 4
    assert Counter(t.spec.connections for t in results.trials) == {2: 2, 20: 2}
    assert all(t.valid and t.usage("app") is not None for t in results.trials)
    assert "Kendall tau" in done.stdout and "connections=2  vs  connections=20" in done.stdout
    assert "measured windows" in done.stderr  # the wall-time ledger
    html = pywebbench("report", str(tmp_path), "--format", "html", "-o", str(tmp_path / "r.html"))
    assert html.returncode == 0 and "plotly-" in (tmp_path / "r.html").read_text()
    assert len(list(tmp_path.glob("plotly-*.min.js"))) == 1  # plotly.js once, beside the page


def test_an_interrupted_sweep_resumes_with_only_the_missing_trials(tmp_path: Path) -> None:
    # Ctrl-C lands mid-sweep however fast the machine: each of the 4 trials starts its server,
    # and the harness is interrupted within 0.1 s of the first one's record.
    argv = [sys.executable, "-m", "pywebbench", "sweep", *TWO, "--method", "restart", "--duration", "1",
            "--warmup", "0.2", "--knob", "connections=5,20", "--seed", "9", "--out", str(tmp_path)]
    harness = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    path = results_path(tmp_path)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline and harness.poll() is None:
            if path.exists() and path.read_text().count('"record": "trial"') >= 1:
                break
            time.sleep(0.1)
        os.kill(harness.pid, signal.SIGINT)
        assert harness.wait(timeout=60) == 130
    finally:
        if harness.poll() is None:
            os.killpg(harness.pid, signal.SIGKILL)
            harness.wait()
    first = {t.spec.trial_id for t in load_results(tmp_path).trials}
    assert 1 <= len(first) < 4
    resumed = pywebbench("sweep", "--resume", str(tmp_path))
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    assert f"{len(first)} trials already recorded, {4 - len(first)} to run" in resumed.stderr
    results = load_results(tmp_path)
    ids = [t.spec.trial_id for t in results.trials]
    assert results.complete and len(ids) == 4 and len(set(ids)) == 4 and first <= set(ids)
    again = pywebbench("sweep", "--resume", str(tmp_path))
    assert again.returncode == 2 and "nothing to resume" in again.stderr


def test_calibrate_and_compare_run_for_real(tmp_path: Path) -> None:
    # three rounds in three launches: two launches give an interval on 1 df (t = 12.7), which
    # on this noisy host missed even B's 10x slowdown once (B/A 0.11 [0.01, 1.20] in CI)
    cal = pywebbench("calibrate", *BRIEF, "--repeats", "3", "--max-rounds", "3", "--rounds-per-launch", "1",
                     "--extra-us", "2000",
                     "--out", str(tmp_path / "cal"))
    assert cal.returncode == 0, cal.stderr[-3000:]
    assert "A/A:" in cal.stdout and "A/B:" in cal.stdout
    report = json.loads((tmp_path / "cal" / "calibration.json").read_text())
    # 2 ms of spin per request: far above this machine's noise in CPU per request
    assert report["rounds"] == 3 and report["cpu_us_per_req_b"] > report["cpu_us_per_req_a"] + 1000
    assert report["detected"] is True
    aliases = Counter(t.spec.alias for t in load_results(tmp_path / "cal").trials)
    assert aliases == {"A": 3, "A2": 3, "B": 3}
    runs = []
    for name in ("one", "two"):
        done = pywebbench("run", "--stack", "flask:gunicorn-sync", *BRIEF, "--repeats", "2",
                          "--out", str(tmp_path / name))
        assert done.returncode == 0, done.stderr[-3000:]
        runs.append(str(tmp_path / name))
    compared = pywebbench("compare", *runs, "--json")
    assert compared.returncode == 0, compared.stderr
    changes = json.loads(compared.stdout)["changes"]
    assert len(changes) == 1 and changes[0]["verdict"] in ("within noise", "faster", "slower")
    assert changes[0]["ratio_ci"] is not None


def test_bad_sweep_and_statistics_input_is_refused_before_anything_starts(tmp_path: Path) -> None:
    cases = [
        (["sweep", *TWO], "needs at least one --knob"),
        (["sweep", *TWO, "--knob", "colour=1,2"], "unknown knob"),
        (["sweep", *TWO, "--knob", "connections=0,10"], "connections"),
        (["sweep", *TWO, "--connections", "5", "--knob", "connections=1,2"], "both set it"),
        (["run", *TWO, "--rate", "100"], "needs --generator oha"),
        (["run", "--preset", "seed999"], "unknown preset"),
        (["run", *TWO, "--aggregation", "mode"], "invalid choice"),
        (["run", *TWO, "--precision", "2"], "--precision is a fraction"),
        (["run", "--resume", str(tmp_path / "none")], "no results file"),
        (["calibrate", "--stack", "go:net-http"], "needs a Python stack"),
    ]
    for args, message in cases:
        done = pywebbench(*args, "--out", str(tmp_path / "x")) if args[0] != "run" or "--resume" not in args \
            else pywebbench(*args)
        assert done.returncode == 2, (args, done.stderr)
        assert message in done.stderr, (args, done.stderr)
        assert len(done.stderr.strip().splitlines()) <= 3, (args, done.stderr)
    assert not (tmp_path / "x").exists()
