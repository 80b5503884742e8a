"""Datasette publishing data.db, as an ASGI app a server can import (`serve:app`).

data.db is built on first import, written aside and renamed into place, so every worker of every
server that imports this at the same time reads the same 1,000 rows."""

from __future__ import annotations

import os
import sqlite3
import tempfile
from pathlib import Path

from datasette.app import Datasette

DB = Path(__file__).with_name("data.db")
CATEGORIES = ("tools", "books", "food", "toys", "garden")


def build(path: Path) -> None:
    if path.exists():
        return
    handle, scratch = tempfile.mkstemp(dir=path.parent, suffix=".db")
    os.close(handle)
    with sqlite3.connect(scratch) as db:
        db.execute("create table items (id integer primary key, name text, category text, price real, stock integer)")
        db.executemany("insert into items values (?, ?, ?, ?, ?)",
                       [(i, f"item {i}", CATEGORIES[i % len(CATEGORIES)], round(1 + (i * 37 % 1000) / 10, 2), i * 7 % 50)
                        for i in range(1, 1001)])
        db.execute("create index items_category on items (category)")
    os.replace(scratch, path)


build(DB)
# Immutable: a published, read-only file (no per-request locking, counts computed once).
app = Datasette(immutables=[str(DB)]).app()
