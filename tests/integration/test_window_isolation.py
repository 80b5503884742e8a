"""A window does not inherit the previous window's backlog: the rounds wait until the live
servers have drained it, and the ledger shows the wait."""

from __future__ import annotations

import re
from pathlib import Path

from pywebbench.analyze.rows import summarize
from pywebbench.results.store import load_results

from .conftest import pywebbench


def _slow_upstream_run(tmp_path: Path, delay: str, *flags: str) -> str:
    """One sync worker behind a slow upstream (`delay` s a request) beside a fast stack, 25
    connections: what it prints."""
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "starlette:uvicorn",
                      "--workload", "upstream", "--upstream-delay", delay, "--workers", "1",
                      "--connections", "25", "--warmup", "0", "--rounds-per-launch", "2", "--timeout", "30",
                      "--out", str(tmp_path), *flags)
    assert done.returncode in (0, 1), done.stderr[-3000:]
    return done.stderr


def test_a_slow_backlog_is_drained_before_the_next_window(tmp_path: Path) -> None:
    # 25 connections at a 0.2 s upstream leave about 20 queued when its 1 s window ends: some 4 s
    # of draining, on no CPU to speak of.
    stderr = _slow_upstream_run(tmp_path, "0.2", "--duration", "1", "--settle", "0", "--repeats", "2",
                                "--seed", "1")
    waited = re.search(r"quiet before windows\s+([\d.]+)s", stderr)
    assert waited is not None, stderr[-3000:]
    # Seed 1 puts flask first in both rounds of the one launch: each of its windows is followed by
    # another, two drains of about 4 s each (a 0.25 s CPU sample before each of 4 windows is the rest).
    assert float(waited.group(1)) >= 5.0
    results = load_results(tmp_path)
    flask = [t for t in results.trials if t.spec.stack_id == "flask:gunicorn-sync"]
    # Each flask window starts on an empty queue: it completes requests (before the wait, the
    # window after an upstream backlog completed none).
    assert all(t.load is not None and t.load.requests > 0 for t in flask)
    rows = summarize(results).rows
    assert {r.label for r in rows} == {"flask:gunicorn-sync", "starlette:uvicorn"}


def test_a_window_starts_after_its_own_settle_has_been_served(tmp_path: Path) -> None:
    # The settle's 25 connections leave 25 requests queued at the sync worker, behind a 0.1 s
    # upstream 2.5 s of work. A 1 s window started at once would complete none of its own; started
    # after the drain, about 10.
    stderr = _slow_upstream_run(tmp_path, "0.1", "--duration", "1", "--settle", "0.5", "--repeats", "2")
    waited = re.search(r"drains after settles\s+([\d.]+)s", stderr)
    assert waited is not None, stderr[-3000:]
    assert float(waited.group(1)) >= 3.0  # two flask settles of about 2-2.5 s each (uvicorn's: none)
    flask = [t for t in load_results(tmp_path).trials if t.spec.stack_id == "flask:gunicorn-sync"]
    assert len(flask) == 2
    assert all(t.load is not None and t.load.requests >= 5 for t in flask), [t.load for t in flask]
