"""The history file (results/history.py): written, read back, refused when it is not one."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.results.history import (
    HISTORY_SCHEMA_VERSION,
    HistoryEntry,
    HistoryRow,
    Machine,
    append_entry,
    read_history,
)

MACHINE = Machine("ci-runner-17", "AMD EPYC", 2, 7_940, "6.8.0", "Ubuntu 24.04", "3.11.7", None)


def row(stack: str = "flask:gunicorn-sync", rps: float | None = 1000.0, valid: bool | None = True) -> HistoryRow:
    return HistoryRow(stack, "hello", "100 connections", rps, (980.0, 1020.0) if rps else None, 0.95,
                      (0.93, 0.97), 12.5, 0.42, valid)


def entry(commit: str, run_id: str = "run-1", rows: tuple[HistoryRow, ...] = (row(),)) -> HistoryEntry:
    return HistoryEntry(commit, "main", "2026-11-25T03:56:03+00:00", "2026-11-25T04:10:00+00:00", "8", run_id,
                        MACHINE, rows)


def test_entries_read_back_as_written_in_append_order(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    first = entry("c1", rows=(row(), row("django:uvicorn", rps=None, valid=False)))
    second = entry("c2", run_id="run-2")
    append_entry(path, first)
    append_entry(path, second)
    history = read_history(path)
    assert history.entries == (first, second)
    assert history.found_version == HISTORY_SCHEMA_VERSION
    assert history.entries[0].rows[1].rps_interval is None


def test_the_same_run_twice_at_one_commit_is_refused_and_at_another_kept(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    append_entry(path, entry("c1"))
    with pytest.raises(UserError, match="already holds run run-1 at commit c1"):
        append_entry(path, entry("c1"))
    append_entry(path, entry("c2"))
    assert [e.commit for e in read_history(path).entries] == ["c1", "c2"]


def test_a_refused_append_leaves_the_file_as_it_was(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    append_entry(path, entry("c1"))
    before = read_history(path)
    with pytest.raises(UserError):
        append_entry(path, entry("c1"))
    assert read_history(path) == before


def test_reading_does_not_write(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    append_entry(path, entry("c1"))
    data = path.read_bytes()
    path.chmod(0o444)
    read_history(path)
    assert path.read_bytes() == data


def _one_line(exc: pytest.ExceptionInfo[UserError]) -> str:
    text = str(exc.value)
    assert "\n" not in text
    return text


def test_a_file_that_is_not_sqlite_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a database, just text\n" * 100)
    for action in (lambda: read_history(path), lambda: append_entry(path, entry("c1"))):
        with pytest.raises(UserError) as exc:
            action()
        assert "is not a pywebbench history" in _one_line(exc)
    assert path.read_text().startswith("not a database")


def test_another_sqlite_file_is_not_a_history(tmp_path: Path) -> None:
    path = tmp_path / "other.sqlite"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE things (x)")
    with pytest.raises(UserError, match="without its meta table"):
        read_history(path)
    with pytest.raises(UserError, match="without its meta table"):
        append_entry(path, entry("c1"))
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('format', 'someone-elses')")
    with pytest.raises(UserError, match="names format 'someone-elses'"):
        read_history(path)


def test_a_newer_schema_is_refused_with_one_line(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    append_entry(path, entry("c1"))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(HISTORY_SCHEMA_VERSION + 1),))
    for action in (lambda: read_history(path), lambda: append_entry(path, entry("c2"))):
        with pytest.raises(UserError) as exc:
            action()
        assert f"has history schema {HISTORY_SCHEMA_VERSION + 1}" in _one_line(exc)
        assert "upgrade pywebbench" in str(exc.value)


def test_a_missing_file_or_folder_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no history file at"):
        read_history(tmp_path / "absent.sqlite")
    with pytest.raises(UserError, match="cannot use the history"):
        append_entry(tmp_path / "no-such-folder" / "history.sqlite", entry("c1"))


def test_an_empty_file_becomes_a_history_on_append(tmp_path: Path) -> None:
    """`touch history.sqlite` in a CI script, then append: an empty file is an empty database."""
    path = tmp_path / "history.sqlite"
    path.touch()
    append_entry(path, entry("c1"))
    assert len(read_history(path).entries) == 1


# Version 1 as it was written (commit 1191c58), kept literally: the file a user may still hold.
V1_SCHEMA = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE entries (id INTEGER PRIMARY KEY, commit_sha TEXT NOT NULL, branch TEXT NOT NULL, "
    "run_at TEXT NOT NULL, appended_at TEXT NOT NULL, run_dir TEXT NOT NULL, run_id TEXT NOT NULL, "
    "hostname TEXT NOT NULL, cpu_model TEXT NOT NULL, cpu_count INTEGER NOT NULL, memory_mb INTEGER NOT NULL, "
    "kernel TEXT NOT NULL, os TEXT NOT NULL, python TEXT NOT NULL, governor TEXT, UNIQUE (commit_sha, run_id))",
    "CREATE TABLE rows (entry_id INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE, stack TEXT NOT NULL, "
    "workload TEXT NOT NULL, setting TEXT NOT NULL, rps REAL, rps_low REAL, rps_high REAL, ratio REAL, "
    "ratio_low REAL, ratio_high REAL, p99_ms REAL, cpu_ms_per_req REAL, PRIMARY KEY (entry_id, stack, workload, "
    "setting))",
)


def write_v1(path: Path) -> None:
    with closing(sqlite3.connect(path)) as conn, conn:
        for statement in V1_SCHEMA:
            conn.execute(statement)
        conn.executemany("INSERT INTO meta VALUES (?, ?)", [("format", "pywebbench-history"), ("schema_version", "1")])
        conn.execute("INSERT INTO entries VALUES (1, 'c0', 'main', '2026-11-20T10:00:00+00:00', "
                     "'2026-11-20T10:30:00+00:00', '7', 'run-0', 'ci-runner-17', 'AMD EPYC', 2, 7940, '6.8.0', "
                     "'Ubuntu 24.04', '3.11.7', NULL)")
        conn.execute("INSERT INTO rows VALUES (1, 'flask:gunicorn-sync', 'hello', '100 connections', 990.0, 970.0, "
                     "1010.0, 0.96, 0.94, 0.98, 12.0, 0.41)")


def test_a_version_1_file_is_read_through_a_migration_in_memory(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    write_v1(path)
    data = path.read_bytes()
    history = read_history(path)
    assert history.found_version == 1
    (old,) = history.entries
    assert old.commit == "c0" and old.machine == MACHINE
    assert old.rows == (HistoryRow("flask:gunicorn-sync", "hello", "100 connections", 990.0, (970.0, 1010.0), 0.96,
                                   (0.94, 0.98), 12.0, 0.41, None),)
    assert path.read_bytes() == data  # still version 1 on disk: reading never writes


def test_appending_to_a_version_1_file_migrates_it_in_place(tmp_path: Path) -> None:
    path = tmp_path / "history.sqlite"
    write_v1(path)
    append_entry(path, entry("c1"))
    with closing(sqlite3.connect(path)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone() == (
            str(HISTORY_SCHEMA_VERSION),)
    history = read_history(path)
    assert history.found_version == HISTORY_SCHEMA_VERSION
    assert [(e.commit, e.rows[0].valid) for e in history.entries] == [("c0", None), ("c1", True)]
