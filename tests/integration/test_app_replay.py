"""`app --from-log` on a small committed access log of examples/notes: the mix read from the log,
printed before the run and kept in the results; with `--replay`, the log's arrivals sent at
their own times by the replay command, each second's sent requests held to what it scheduled."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.analyze.replay_fidelity import fidelities
from pywebbench.results.store import load_results

from .conftest import ROOT, pywebbench

LOG = ROOT / "tests" / "data" / "notes-replay.log"
"""1,200 GETs over 8 s at 100 req/s with two 300 req/s seconds; 1% are 404s the mix leaves out."""
NOTES = ROOT / "examples" / "notes"
APP = ("app", "--app", "notes:app", "--app-dir", str(NOTES), "--requirements", str(NOTES / "requirements.txt"),
       "--setup", "python notes.py", "--server", "gunicorn-sync", "--from-log", str(LOG))
SHORT = ("--duration", "2", "--warmup", "0.5", "--settle", "0.2", "--connections", "16", "--repeats", "2")

pytestmark = pytest.mark.integration


def test_the_log_is_replayed_at_its_own_pace_and_twice_as_fast(tmp_path: Path) -> None:
    for speed in ("1", "2"):
        out = tmp_path / f"speed{speed}"
        done = pywebbench(*APP, "--replay", "--replay-speed", speed, *SHORT, "--out", str(out), timeout=300)
        assert done.returncode == 0, done.stderr[-3000:]
        assert "GET /notes?limit=5" in done.stdout and "GET /missing" not in done.stdout, done.stdout[-3000:]
        results = load_results(out)
        assert results.complete and results.header.options["traffic"]["failed_left_out"] > 0
        loads = [t.load for t in results.trials if t.load is not None]
        assert loads and all(load.generator == "replay" for load in loads)
        # the mean offered rate is the log's (150 req/s) times the speed
        assert all(t.spec.rate == pytest.approx(150 * float(speed), rel=0.01) for t in results.trials)
        found = fidelities(results.trials)
        assert len(found) == len(results.trials)
        for window in found:
            assert window.sent == window.scheduled, window  # every scheduled request went out
            assert window.worst_second <= 0.05, window
        assert (out / "replay.md").read_text().count("| second |") == len(found)
        assert "the log's pace kept" in done.stdout


def test_the_logs_mix_at_a_constant_rate_without_replay(tmp_path: Path) -> None:
    out = tmp_path / "mix"
    done = pywebbench(*APP, "--rate", "100", *SHORT, "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(out)
    traffic = results.header.options["traffic"]
    shares = {kind["kind"]: kind["share"] for kind in traffic["kinds"]}
    assert set(shares) == {"GET /notes?limit=5", "GET /notes?limit=20"}
    assert all(t.load is not None and t.load.generator == "oha" and not t.load.per_second for t in results.trials)


def test_traffic_flags_misused_are_all_refused_at_once() -> None:
    done = pywebbench("app", "--app", "notes:app", "--app-dir", str(NOTES), "--request", "GET /notes",
                      "--from-log", str(LOG), "--replay-speed", "0", "--max-kinds", "0", timeout=60)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if "error" in line]
    assert any("give one of --request or --from-log" in line for line in lines), done.stderr
    assert any("--replay-speed goes with --replay" in line for line in lines), done.stderr
    assert any("--max-kinds must be at least 1" in line for line in lines), done.stderr


def test_a_har_gives_its_bodies_and_leaves_its_credentials_out(tmp_path: Path) -> None:
    out = tmp_path / "har"
    done = pywebbench("app", "--app", "notes:app", "--app-dir", str(NOTES), "--requirements",
                      str(NOTES / "requirements.txt"), "--setup", "python notes.py", "--server", "gunicorn-sync",
                      "--from-har", str(NOTES / "sample.har"), "--duration", "1", "--warmup", "0.5",
                      "--connections", "8", "--repeats", "1", "--out", str(out), timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]  # every kind, the POST with its JSON body, answered 200
    traffic = load_results(out).header.options["traffic"]
    assert "POST /search" in {kind["kind"] for kind in traffic["kinds"]}
    assert {"authorization", "cookie"} <= {h.lower() for h in traffic["stripped_headers"]}
    assert "credentials left out" in done.stdout
