"""The service-backed workloads on real stacks: PostgreSQL via pgbouncer, the Go upstream, nginx."""

from __future__ import annotations

from pathlib import Path

from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results

from .conftest import pywebbench

SHORT = ("--duration", "1", "--warmup", "0.5", "--settle", "0.2", "--db-rows", "20000", "--repeats", "1")
BARE = ("--duration", "0.4", "--warmup", "0", "--settle", "0")
"""The matrix's 29 windows: 0.4 s each (wrk stopped at the window's end), and no discarded load
before them: warmups, settles and the drains after them were 40 of the 105 s it took. Each window
still starts on drained, idle servers (quiet before windows), and warmups and settles are
exercised by every other run."""


def _overlap(checks: tuple[str, ...]) -> list[str]:
    """The overlap check only: machine-state checks (busy-machine, ...) depend on neighbours."""
    return [c for c in checks if c.startswith("no-overlap")]


def _run(tmp_path: Path, *args: str, codes: tuple[int, ...] = (0,)) -> ResultSet:
    done = pywebbench("run", *SHORT, "--out", str(tmp_path), *args)  # a later --duration/--warmup/--settle wins
    assert done.returncode in codes, done.stderr[-3000:]
    return load_results(tmp_path)


def test_every_workload_answers_right_on_every_type(tmp_path: Path) -> None:
    stacks = ("flask:gunicorn-sync", "flask:gunicorn-gevent", "starlette:uvicorn", "go:net-http", "nginx:static")
    workloads = ("hello", "db", "upstream", "template", "api", "posts", "cpu", "static")
    args = [arg for s in stacks for arg in ("--stack", s)] + [arg for w in workloads for arg in ("--workload", w)]
    results = _run(tmp_path, "--connections", "20", *BARE, *args)
    seen = {(t.spec.stack_id, t.spec.workload) for t in results.trials}
    assert ("nginx:static", "static") in seen and ("flask:gunicorn-sync", "static") not in seen
    assert len(seen) == 4 * 7 + 1
    for trial in results.trials:
        assert trial.valid, (trial.spec.stack_id, trial.spec.workload, trial.error)
        assert not _overlap(trial.checks), (trial.spec.stack_id, trial.checks)
        if trial.spec.workload in ("db", "api", "posts"):
            assert trial.db_sessions is not None and 0 < trial.db_sessions <= 100
    names = {s.name for s in results.services}
    assert {"postgresql", "pgbouncer", "upstream", "go"} <= names
    upstream = next(s for s in results.services if s.name == "upstream")
    assert upstream.config["ceilings"][0]["rps"] > 1000


def test_unpatched_driver_under_gevent_fails_the_overlap_check(tmp_path: Path) -> None:
    common = ("--stack", "flask:gunicorn-gevent", "--workload", "db", "--db-delay", "0.2", "--workers", "1",
              "--connections", "10")
    patched = _run(tmp_path / "patched", *common)
    (trial,) = patched.trials
    assert trial.stack.driver == "psycopg2-gevent"
    assert not _overlap(trial.checks), trial.checks
    # Serialised 0.2 s queries under 10 connections may time out: then the trial is invalid
    # and the run exits 1 (some trial failed), which is what the exit code is for.
    blocking = _run(tmp_path / "blocking", *common, "--driver", "psycopg2", codes=(0, 1))
    (trial,) = blocking.trials
    assert trial.stack.driver == "psycopg2"
    assert any(c.startswith("no-overlap") for c in trial.checks), trial.checks


def test_pgbouncer_cap_below_the_connection_count_makes_requests_wait_not_fail(tmp_path: Path) -> None:
    results = _run(tmp_path, "--stack", "starlette:uvicorn", "--workload", "db", "--max-db-sessions", "3",
                   "--connections", "30")
    (trial,) = results.trials
    assert trial.valid, trial.error
    assert trial.db_sessions is not None and 1 <= trial.db_sessions <= 3
    assert trial.load is not None and trial.load.errors == 0


def test_nginx_topology_proxies_to_the_app(tmp_path: Path) -> None:
    results = _run(tmp_path, "--stack", "flask:gunicorn-sync", "--workload", "hello", "--topology", "nginx",
                   "--connections", "20")
    (trial,) = results.trials
    assert trial.valid, trial.error
    assert trial.spec.topology == "nginx"


def test_posts_from_sqlite_on_a_sync_and_a_coroutine_stack(tmp_path: Path) -> None:
    results = _run(tmp_path, "--db", "sqlite", "--workload", "posts", "--connections", "10",
                   "--stack", "flask:gunicorn-sync", "--stack", "starlette:uvicorn")
    drivers = {t.spec.stack_id: (t.stack.db, t.stack.driver) for t in results.trials}
    assert drivers == {"flask:gunicorn-sync": ("sqlite", "sqlite3"),
                       "starlette:uvicorn": ("sqlite", "databases-aiosqlite")}
    sync_client = _run(tmp_path / "sync-client", "--db", "sqlite", "--workload", "posts", "--connections", "10",
                       "--stack", "starlette:uvicorn", "--driver", "psycopg")
    (threadpool,) = sync_client.trials  # seed 001's 'Starlette (sync)': sqlite3 in the thread pool
    assert (threadpool.stack.db, threadpool.stack.driver) == ("sqlite", "sqlite3")
    for trial in (*results.trials, threadpool):
        assert trial.valid, (trial.spec.stack_id, trial.error)
        assert trial.load is not None and trial.load.requests > 0
        assert trial.db_sessions is None  # no PostgreSQL session to count
    sqlite = next(s for s in results.services if s.name == "sqlite")
    assert sqlite.config["rows"] == 300
