"""Ctrl-C mid-run under the restart method: finished trials stay and no process is left behind.

The interleaved method's Ctrl-C test is in test_interleaved.py."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from pywebbench.results.store import load_results, results_path

from .conftest import ROOT


def test_sigint_mid_run_keeps_finished_trials_and_leaves_nothing(tmp_path: Path) -> None:
    argv = [sys.executable, "-m", "pywebbench", "run", "--method", "restart", "--duration", "4", "--warmup", "0",
            "--connections", "10", "--out", str(tmp_path),
            "--stack", "flask:gunicorn-sync", "--stack", "flask:gunicorn-gthread", "--stack", "bottle:gunicorn-sync"]
    harness = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               start_new_session=True)
    seen: set[int] = set()
    path = results_path(tmp_path)
    deadline = time.monotonic() + 300
    try:
        while time.monotonic() < deadline:
            try:
                seen.update(p.pid for p in psutil.Process(harness.pid).children(recursive=True))
            except psutil.NoSuchProcess:
                break
            if path.exists() and path.read_text().count('"record": "trial"') >= 1 and len(seen) > 2:
                time.sleep(0.5)  # well inside the second stack's measurement
                seen.update(p.pid for p in psutil.Process(harness.pid).children(recursive=True))
                break
            time.sleep(0.1)
        os.kill(harness.pid, signal.SIGINT)
        code = harness.wait(timeout=60)
    finally:
        if harness.poll() is None:
            os.killpg(harness.pid, signal.SIGKILL)
            harness.wait()
    assert code == 130, harness.stderr.read().decode()[-2000:] if harness.stderr else ""
    results = load_results(tmp_path)
    assert not results.complete
    assert 1 <= len(results.trials) < 3
    assert results.trials[0].valid
    time.sleep(0.2)
    left = [pid for pid in seen if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
    assert left == [], [psutil.Process(p).cmdline() for p in left]
