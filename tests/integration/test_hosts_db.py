"""The db role on its own host: #DB sampled there, one pgbouncer database per lane, the session cap.

Over real SSH on the netns rig (root and openssh-server; skipped otherwise).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pywebbench.results.store import load_results
from pywebbench.stage.netns import SSHD

REPO = Path(__file__).resolve().parents[2]
PYWEBBENCH = [sys.executable, "-m", "pywebbench"]
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK),
                                reason="the netns rig needs root and openssh-server")


def test_db_sessions_are_sampled_on_the_db_host_per_lane_under_the_cap(tmp_path: Path) -> None:
    """Two stacks live at once (two lanes, each its own pgbouncer database on the db host), eight
    connections against a cap of two sessions: every window's #DB is read there, above 0 and at
    most the cap, and the db role's CPU there is in the trial."""
    out = tmp_path / "run"
    done = subprocess.run([*PYWEBBENCH, "run", "--topology", "netns", "--stack", "flask:gunicorn-sync",
                           "--stack", "bottle:gunicorn-sync", "--workers", "4", "--workload", "db",
                           "--db-delay", "0.005", "--db-pool", "0", "--db-rows", "1000", "--connections", "8",
                           "--max-db-sessions", "2", "--duration", "1", "--settle", "0.25", "--repeats", "1",
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    results = load_results(out)
    placed = next(s for s in results.services if s.name == "placement")
    assert not any("#DB" in item or "per-lane" in item for item in placed.config["not_wired"])
    assert len(results.trials) == 2  # one window per lane
    for trial in results.trials:  # valid: each lane's app reached its own database entry on the db host
        assert trial.valid, (trial.spec.stack_id, trial.checks)
        assert trial.db_sessions is not None and 1 <= trial.db_sessions <= 2, trial.db_sessions
        db = {u.role: u for u in trial.resources}["db"]  # PostgreSQL and pgbouncer, read on their host
        assert db.cpu_s > 0 and db.processes >= 3, db


def test_a_session_cap_sweep_restarts_pgbouncer_on_the_db_host_at_each_point(tmp_path: Path) -> None:
    """Seed 000's knob across hosts: eight connections against caps of 1 and 3 sessions, pgbouncer
    started again on the db host for each point, the app reaching it through the same link."""
    out = tmp_path / "run"
    done = subprocess.run([*PYWEBBENCH, "run", "--topology", "netns", "--stack", "flask:gunicorn-sync",
                           "--workers", "4", "--workload", "db", "--db-delay", "0.005", "--db-pool", "0",
                           "--connections", "8", "--knob", "max_db_sessions=1,3", "--duration", "1",
                           "--settle", "0.25", "--repeats", "1", "--out", str(out)],
                          capture_output=True, text=True, cwd=REPO, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    results = load_results(out)
    by_cap: dict[int, list[int]] = {}
    for trial in results.trials:
        assert trial.valid and trial.db_sessions is not None, (trial.spec.max_db_sessions, trial.checks)
        by_cap.setdefault(trial.spec.max_db_sessions or 0, []).append(trial.db_sessions)
    assert set(by_cap) == {1, 3} and max(by_cap[1]) == 1, by_cap
    assert max(by_cap[3]) >= 2 and max(by_cap[3]) <= 3, by_cap  # the raised cap was in force
    restarted = [s.config for s in results.services if s.name == "pgbouncer (placed)"]
    assert restarted and {c["host"] for c in restarted} == {"db"} and 3 in {c["max_db_sessions"] for c in restarted}
