"""The performance history: one SQLite file a user keeps (a CI artifact, a branch), one entry per
appended run.

Like results.jsonl it carries its schema version (the `meta` table); an older file is brought up
to date step by step when opened (in place for an append, in memory for a read, so reading never
writes), and a newer one is refused. Entries keep the order they were appended in: that is the
order of the commits a CI job measured.

Version 1 held, per entry, the commit, branch, times, run and machine, and per row (stack,
workload, setting) req/s, the ratio to the baseline with their 95% intervals, p99 and CPU per
request. Version 2 adds whether each row was valid (every window without errors), so a step made
by a broken run is not taken for one in the code; rows kept under version 1 read as unknown.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.results.model import MachineInfo

HISTORY_SCHEMA_VERSION = 2
HISTORY_FORMAT = "pywebbench-history"
"""meta's `format`: tells a history from any other SQLite file."""

_SCHEMA_V1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE entries (
    id INTEGER PRIMARY KEY,
    commit_sha TEXT NOT NULL,
    branch TEXT NOT NULL,
    run_at TEXT NOT NULL,
    appended_at TEXT NOT NULL,
    run_dir TEXT NOT NULL,
    run_id TEXT NOT NULL,
    hostname TEXT NOT NULL,
    cpu_model TEXT NOT NULL,
    cpu_count INTEGER NOT NULL,
    memory_mb INTEGER NOT NULL,
    kernel TEXT NOT NULL,
    os TEXT NOT NULL,
    python TEXT NOT NULL,
    governor TEXT,
    UNIQUE (commit_sha, run_id)
);
CREATE TABLE rows (
    entry_id INTEGER NOT NULL REFERENCES entries (id) ON DELETE CASCADE,
    stack TEXT NOT NULL,
    workload TEXT NOT NULL,
    setting TEXT NOT NULL,
    rps REAL, rps_low REAL, rps_high REAL,
    ratio REAL, ratio_low REAL, ratio_high REAL,
    p99_ms REAL,
    cpu_ms_per_req REAL,
    PRIMARY KEY (entry_id, stack, workload, setting)
);
"""


@dataclass(frozen=True)
class Machine:
    """What the results header records about the machine, less what changes from run to run
    (its load, the CPUs it was given)."""

    hostname: str
    cpu_model: str
    cpu_count: int
    memory_mb: int
    kernel: str
    os: str
    python: str
    governor: str | None = None

    @classmethod
    def of(cls, info: MachineInfo) -> Machine:
        return cls(info.hostname, info.cpu_model, info.cpu_count, info.memory_mb, info.kernel, info.os,
                   info.python, info.governor)

    @property
    def kind(self) -> str:
        """The hardware a series is measured on. Not the hostname: a CI runner gets a new one each
        job, and its figures still belong to one series."""
        return f"{self.cpu_model}, {self.cpu_count} CPUs"


@dataclass(frozen=True)
class HistoryRow:
    """One row of a run as `report` prints it, with the figures a history follows."""

    stack: str
    workload: str
    setting: str
    """The row's knobs in words (connections, workers, ...): its cell, workload aside."""
    rps: float | None
    rps_interval: tuple[float, float] | None
    ratio: float | None
    """To the run's baseline stack, in the same cell."""
    ratio_interval: tuple[float, float] | None
    p99_ms: float | None
    cpu_ms_per_req: float | None
    valid: bool | None = None
    """Every window without errors; None for a row kept under schema 1, which did not record it."""


@dataclass(frozen=True)
class HistoryEntry:
    commit: str
    branch: str
    run_at: str
    """When the run was made (its header's created_at)."""
    appended_at: str
    run_dir: str
    """The run directory's name."""
    run_id: str
    machine: Machine
    rows: tuple[HistoryRow, ...]


@dataclass(frozen=True)
class History:
    path: Path
    entries: tuple[HistoryEntry, ...]
    """In the order they were appended."""
    found_version: int
    """The schema the file was at on disk (older ones were migrated when read)."""


def append_entry(path: Path, entry: HistoryEntry) -> None:
    """Add a run to the history at `path`, creating the file or migrating it first."""
    try:
        with closing(sqlite3.connect(path, isolation_level=None)) as conn:
            conn.execute("PRAGMA foreign_keys = ON")
            # IMMEDIATE: two appends at once queue on the write lock instead of racing the check.
            conn.execute("BEGIN IMMEDIATE")
            try:
                _prepare_for_write(conn, path)
                _insert(conn, path, entry)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
    except sqlite3.Error as exc:
        raise UserError(_sqlite_problem(path, exc)) from None


def read_history(path: Path) -> History:
    """Every entry of the history at `path`; an older schema is migrated in a copy in memory."""
    if not path.is_file():
        raise UserError(f"no history file at {path}")
    try:
        with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as disk:
            version = _version(disk, path)
            conn = sqlite3.connect(":memory:")
            disk.backup(conn)
        with closing(conn):
            if version < HISTORY_SCHEMA_VERSION:
                with conn:
                    migrate(conn, version)
            return History(path, _entries(conn), version)
    except sqlite3.Error as exc:
        raise UserError(_sqlite_problem(path, exc)) from None


def migrate(conn: sqlite3.Connection, version: int) -> None:
    """Bring a history from `version` up to HISTORY_SCHEMA_VERSION, one step at a time (the
    caller holds the transaction)."""
    if version < 1:
        raise UserError(f"no migration from history schema {version} to {HISTORY_SCHEMA_VERSION}")
    if version == 1:
        # 2 added each row's validity; what version 1 kept is not known (NULL), not assumed valid.
        conn.execute("ALTER TABLE rows ADD COLUMN valid INTEGER")
        version = 2
    _set_version(conn, version)


def _sqlite_problem(path: Path, exc: sqlite3.Error) -> str:
    reason = (str(exc).splitlines() or [type(exc).__name__])[0]
    # SQLite says "file is not a database" as the bare DatabaseError; the rest are I/O and locks.
    if type(exc) is sqlite3.DatabaseError:
        return f"{path} is not a pywebbench history ({reason})"
    return f"cannot use the history {path}: {reason}"


def _version(conn: sqlite3.Connection, path: Path) -> int:
    """The schema version in meta; a one-line refusal if this is not a history or too new."""
    tables = {name for (name,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        raise UserError(f"{path} is not a pywebbench history (an SQLite file without its meta table)")
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    if meta.get("format") != HISTORY_FORMAT:
        raise UserError(f"{path} is not a pywebbench history (its meta table names format {meta.get('format')!r})")
    text = str(meta.get("schema_version", ""))
    if not text.isdigit():
        raise UserError(f"{path}: history schema_version {text!r} is not a whole number")
    version = int(text)
    if version > HISTORY_SCHEMA_VERSION:
        raise UserError(f"{path} has history schema {version}; this pywebbench reads up to "
                        f"{HISTORY_SCHEMA_VERSION}: upgrade pywebbench")
    return version


def _set_version(conn: sqlite3.Connection, version: int) -> None:
    conn.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)", (str(version),))


def _prepare_for_write(conn: sqlite3.Connection, path: Path) -> None:
    """A new file gets version 1 and every migration since (one path to the current schema);
    an older one is migrated in place."""
    if not conn.execute("SELECT name FROM sqlite_master").fetchall():
        # One statement at a time: executescript would COMMIT the caller's transaction first.
        for statement in _SCHEMA_V1.split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("INSERT INTO meta (key, value) VALUES ('format', ?)", (HISTORY_FORMAT,))
        _set_version(conn, 1)
        migrate(conn, 1)
        return
    version = _version(conn, path)
    if version < HISTORY_SCHEMA_VERSION:
        migrate(conn, version)


def _insert(conn: sqlite3.Connection, path: Path, entry: HistoryEntry) -> None:
    m = entry.machine
    try:
        cursor = conn.execute(
            "INSERT INTO entries (commit_sha, branch, run_at, appended_at, run_dir, run_id, hostname, cpu_model, "
            "cpu_count, memory_mb, kernel, os, python, governor) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (entry.commit, entry.branch, entry.run_at, entry.appended_at, entry.run_dir, entry.run_id, m.hostname,
             m.cpu_model, m.cpu_count, m.memory_mb, m.kernel, m.os, m.python, m.governor))
    except sqlite3.IntegrityError:
        raise UserError(f"{path} already holds run {entry.run_id} at commit {entry.commit}") from None
    conn.executemany(
        "INSERT INTO rows (entry_id, stack, workload, setting, rps, rps_low, rps_high, ratio, ratio_low, ratio_high, "
        "p99_ms, cpu_ms_per_req, valid) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        [(cursor.lastrowid, r.stack, r.workload, r.setting, r.rps, *_pair(r.rps_interval), r.ratio,
          *_pair(r.ratio_interval), r.p99_ms, r.cpu_ms_per_req, r.valid) for r in entry.rows])


def _pair(interval: tuple[float, float] | None) -> tuple[float | None, float | None]:
    return interval if interval is not None else (None, None)


def _interval(low: float | None, high: float | None) -> tuple[float, float] | None:
    return (low, high) if low is not None and high is not None else None


def _entries(conn: sqlite3.Connection) -> tuple[HistoryEntry, ...]:
    rows: dict[int, list[HistoryRow]] = {}
    for (entry_id, stack, workload, setting, rps, rps_low, rps_high, ratio, ratio_low, ratio_high, p99,
         cpu, valid) in conn.execute("SELECT entry_id, stack, workload, setting, rps, rps_low, rps_high, ratio, "
                                     "ratio_low, ratio_high, p99_ms, cpu_ms_per_req, valid FROM rows "
                                     "ORDER BY entry_id, rowid"):
        rows.setdefault(entry_id, []).append(HistoryRow(
            stack, workload, setting, rps, _interval(rps_low, rps_high), ratio, _interval(ratio_low, ratio_high), p99,
            cpu, None if valid is None else bool(valid)))
    entries = []
    for (entry_id, commit, branch, run_at, appended_at, run_dir, run_id, *machine) in conn.execute(
            "SELECT id, commit_sha, branch, run_at, appended_at, run_dir, run_id, hostname, cpu_model, cpu_count, "
            "memory_mb, kernel, os, python, governor FROM entries ORDER BY id"):
        entries.append(HistoryEntry(commit, branch, run_at, appended_at, run_dir, run_id, Machine(*machine),
                                    tuple(rows.get(entry_id, ()))))
    return tuple(entries)
