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
                           "--max-db-sessions", "2", "--duration", "1", "--settle", "0.25", "--repeats", "2",
                           "--out", str(out)], capture_output=True, text=True, cwd=REPO, timeout=400)
    assert done.returncode == 0, done.stderr[-2000:]
    results = load_results(out)
    placed = next(s for s in results.services if s.name == "placement")
    assert not any("#DB" in item or "per-lane" in item for item in placed.config["not_wired"])
    assert len(results.trials) == 4
    for trial in results.trials:  # valid: each lane's app reached its own database entry on the db host
        assert trial.valid, (trial.spec.stack_id, trial.checks)
        assert trial.db_sessions is not None and 1 <= trial.db_sessions <= 2, trial.db_sessions
        db = {u.role: u for u in trial.resources}["db"]  # PostgreSQL and pgbouncer, read on their host
        assert db.cpu_s > 0 and db.processes >= 3, db


def test_a_session_cap_sweep_across_hosts_is_refused_in_one_line(tmp_path: Path) -> None:
    done = subprocess.run([*PYWEBBENCH, "run", "--topology", "netns", "--stack", "flask:gunicorn-sync",
                           "--workload", "db", "--knob", "max_db_sessions=2,4", "--out", str(tmp_path / "r")],
                          capture_output=True, text=True, cwd=REPO, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "max_db_sessions cannot yet restart pgbouncer on the db host" in done.stderr
    assert not (tmp_path / "r").exists()
