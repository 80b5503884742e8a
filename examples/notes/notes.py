"""A small Flask app for the README's tuning run: JSON notes from SQLite, rendered per request.

Its one endpoint does what many small APIs do: a query, a little Python per row, a JSON body.
The database file is made by `python notes.py` (the run's --setup) in the app directory.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

from flask import Flask, jsonify, request

DB = Path(os.environ.get("NOTES_DB", Path(__file__).with_name("notes.sqlite3")))

app = Flask(__name__)


def _connect() -> sqlite3.Connection:
    connection = sqlite3.connect(f"file:{DB}?mode=ro", uri=True, check_same_thread=False)
    connection.row_factory = sqlite3.Row
    return connection


@app.get("/notes")
def notes():  # type: ignore[no-untyped-def]
    limit = min(int(request.args.get("limit", "20")), 100)
    with _connect() as connection:
        rows = connection.execute("SELECT id, title, body, tags FROM notes ORDER BY id DESC LIMIT ?",
                                  (limit,)).fetchall()
    return jsonify([{"id": r["id"], "title": r["title"].title(), "words": len(r["body"].split()),
                     "tags": sorted(r["tags"].split(","))} for r in rows])


def create(count: int = 1000) -> None:
    DB.unlink(missing_ok=True)
    with sqlite3.connect(DB) as connection:
        connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT)")
        connection.executemany("INSERT INTO notes (title, body, tags) VALUES (?, ?, ?)",
                               [(f"note number {i}", " ".join(f"word{j}" for j in range(i % 50 + 10)),
                                 ",".join(f"tag{(i * k) % 7}" for k in range(1, 4))) for i in range(count)])


if __name__ == "__main__":
    create()
