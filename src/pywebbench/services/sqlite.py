"""Seed 001's database: a SQLite file holding the rows /posts reads, made by the harness.

The rows come from the same seeded stream as PostgreSQL's `bench` table (postgres.bench_rows),
so key k holds the same letters in both and /posts answers the same bytes from either. No
server runs: the file lives in the run's private work directory and goes with it.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from pywebbench.services.postgres import bench_rows

POSTS_ROWS = 300
"""Keys 1..300: what /posts reads (apps/pwb_contract.POSTS_SQL). The rest of the million would only
make the file bigger; the read is an index range scan on either database."""
POSTS_SQL = "SELECT a, b FROM bench WHERE a <= 300 ORDER BY a"


def sqlite_rows(rows: int, seed: int) -> list[tuple[int, str]]:
    """The first min(rows, POSTS_ROWS) rows of PostgreSQL's bench table for this seed."""
    out: list[tuple[int, str]] = []
    for chunk in bench_rows(min(rows, POSTS_ROWS), seed):
        for line in chunk.splitlines():
            a, b = line.split(b"\t")
            out.append((int(a), b.decode("ascii")))
    return out


def fill_sqlite(path: Path, rows: int, seed: int = 0) -> None:
    """Create `bench(a integer primary key, b text)` in a new file at path and fill it."""
    if path.exists():
        raise FileExistsError(f"{path} exists; the SQLite database is made fresh for each run")
    with closing(sqlite3.connect(path)) as conn, conn:
        conn.execute("CREATE TABLE bench (a INTEGER PRIMARY KEY, b TEXT NOT NULL)")
        conn.executemany("INSERT INTO bench (a, b) VALUES (?, ?)", sqlite_rows(rows, seed))
    path.chmod(0o644)  # the apps open it read-only; PostgreSQL's user need not


def read_posts(path: Path) -> list[tuple[int, str]]:
    """The rows /posts answers with, read back from the file (what the apps read)."""
    with closing(sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)) as conn:
        return [(int(a), str(b)) for a, b in conn.execute(POSTS_SQL).fetchall()]
