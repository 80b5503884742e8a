"""The app server measured the way it will be deployed (issue 48), on real stacks and the real
kernel: a CPU quota that throttles it, none that does not, workers=auto as Gunicorn sizes itself,
and a memory limit whose OOM kill fails the window as server-oom while the run goes on."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

import psutil
import pytest

from pywebbench.measure.cgroup_layout import detect
from pywebbench.results.model import TrialStatus
from pywebbench.results.server import AUTO_WORKERS
from pywebbench.results.store import load_results

from .conftest import pywebbench

SHORT = ("--duration", "1", "--warmup", "0.3", "--settle", "0.1", "--connections", "20")


def _needs_limits() -> None:
    layout = detect()
    if layout is None or layout.weight_root is None or layout.memory_root is None:
        pytest.skip("needs root and the cpu and memory cgroup controllers")


def test_a_quota_throttles_the_server_and_workers_auto_records_gunicorn_s_choice(tmp_path: Path) -> None:
    _needs_limits()
    out = tmp_path / "quota"
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", *SHORT, "--repeats", "1", "--cpu-quota", "0.2",
                      "--workers", "auto", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (trial,) = load_results(out).trials
    assert trial.status is TrialStatus.OK, trial.error
    assert trial.spec.cpu_quota == 0.2 and trial.spec.workers == AUTO_WORKERS
    reading = trial.server_cgroup
    assert reading is not None and reading.periods and reading.throttled_periods, reading
    assert reading.throttled_s is not None and reading.throttled_s > 0
    app = trial.usage("app")
    assert app is not None and app.cpu_s <= 0.2 * app.window_s * 1.5  # the quota held it near 20% of a core
    # No -w: Gunicorn's own default (WEB_CONCURRENCY unset) is one worker, beside its master.
    assert "--workers" not in trial.stack.argv
    sizing = trial.stack.sizing
    assert sizing is not None and (sizing.workers, sizing.host_cpus, sizing.cpu_quota) == (1, os.cpu_count(), 0.2)
    assert trial.stack.workers == 1
    wide = pywebbench("report", str(out), "--wide")
    assert "auto 1" in wide.stdout and "CPU quota 0.2" in wide.stdout


def test_without_a_quota_no_period_is_throttled(tmp_path: Path) -> None:
    _needs_limits()
    out = tmp_path / "free"
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", *SHORT, "--repeats", "1", "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    (trial,) = load_results(out).trials
    assert trial.status is TrialStatus.OK, trial.error
    reading = trial.server_cgroup
    assert reading is not None and reading.throttled_periods == 0 and reading.throttled_s == 0, reading
    assert reading.oom_kills == 0 and reading.peak_memory_mb and reading.peak_over in ("window", "cgroup")
    assert trial.spec.cpu_quota is None and trial.stack.sizing is None


LEAK = textwrap.dedent('''
    kept = []


    def app(environ, start_response):
        kept.append(b"x" * (2 << 20))  # 2 MiB written per request and kept: a worker outgrows any limit
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"ok"]
''')


def test_an_oom_kill_fails_its_window_as_server_oom_and_the_run_goes_on(tmp_path: Path) -> None:
    _needs_limits()
    (tmp_path / "leak.py").write_text(LEAK)
    out = tmp_path / "run"
    done = pywebbench("app", "--app", "leak:app", "--app-dir", str(tmp_path), "--server", "gunicorn-sync",
                      "--workers", "1", "--memory-limit", "96M", *SHORT, "--rounds", "2", "--rounds-per-launch", "1",
                      "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]
    results = load_results(out)
    assert results.complete
    trials = sorted(results.trials, key=lambda t: t.spec.round)
    assert [t.spec.round for t in trials] == [1, 2]  # the second launch ran after the first one's OOM
    for trial in trials:
        assert trial.status is TrialStatus.SERVER_OOM, (trial.status, trial.error)
        assert trial.error is not None
        assert trial.error.splitlines()[0].startswith("the kernel killed "), trial.error
        assert "over its memory limit" in trial.error.splitlines()[0]
    named = [line for line in done.stderr.splitlines() if ": server-oom: the kernel killed " in line]
    assert len(named) == 2, done.stderr[-3000:]  # one line per window
    assert all(t.server_cgroup is None or t.server_cgroup.oom_kills > 0 for t in trials)
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if str(tmp_path) in " ".join(p.info["cmdline"] or ())]
    assert left == [], left
    assert not [d for d in Path("/sys/fs/cgroup/memory").glob(f"pywebbench-{results.header.run_id}*")]
