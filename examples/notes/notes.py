"""A small Flask app for the README's tuning run: JSON notes from SQLite, rendered per request.

`/notes?limit=N` does what many small APIs do: a query, a little Python per row, a JSON body.
A note by id, the notes of a tag (`GET /tags/TAG`, or `POST /search` with a JSON body) and a
health check make a mix of requests (`make_access_log.py`'s log, `sample.har`). The database
file is made by `python notes.py` (the run's --setup) in the app directory.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import tempfile
from pathlib import Path

from flask import Flask, abort, jsonify, request

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


@app.get("/notes/<int:note_id>")
def note(note_id: int):  # type: ignore[no-untyped-def]
    with _connect() as connection:
        row = connection.execute("SELECT id, title, body, tags FROM notes WHERE id = ?", (note_id,)).fetchone()
    if row is None:
        abort(404)
    return jsonify({"id": row["id"], "title": row["title"].title(), "body": row["body"],
                    "tags": sorted(set(row["tags"].split(",")))})


@app.get("/tags/<tag>")
def tagged(tag: str):  # type: ignore[no-untyped-def]
    return jsonify({"tag": tag, "notes": _tagged(tag, 20)})


@app.post("/search")
def search():  # type: ignore[no-untyped-def]
    query = request.get_json(silent=True)
    if not isinstance(query, dict) or not isinstance(query.get("tag"), str) \
            or not isinstance(query.get("limit", 20), int):
        abort(400)
    return jsonify(_tagged(query["tag"], min(query.get("limit", 20), 100)))


def _tagged(tag: str, limit: int) -> list[dict[str, object]]:
    with _connect() as connection:
        rows = connection.execute("SELECT id, title FROM notes WHERE ',' || tags || ',' LIKE ? ORDER BY id DESC "
                                  "LIMIT ?", (f"%,{tag},%", limit)).fetchall()
    return [{"id": r["id"], "title": r["title"].title()} for r in rows]


@app.get("/health")
def health():  # type: ignore[no-untyped-def]
    return jsonify({"ok": True})


def create(count: int = 1000) -> None:
    # Built beside the database and renamed over it: a server already reading this directory (another
    # run's, set up from the same files) sees the old file or the new one, never an empty one.
    handle, name = tempfile.mkstemp(prefix=DB.name, dir=DB.parent)
    os.close(handle)
    try:
        with contextlib.closing(sqlite3.connect(name)) as connection, connection:
            connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, body TEXT, tags TEXT)")
            connection.executemany("INSERT INTO notes (title, body, tags) VALUES (?, ?, ?)",
                                   [(f"note number {i}", " ".join(f"word{j}" for j in range(i % 50 + 10)),
                                     ",".join(f"tag{(i * k) % 7}" for k in range(1, 4))) for i in range(count)])
        os.chmod(name, 0o644)
        os.replace(name, DB)
    finally:
        Path(name).unlink(missing_ok=True)


if __name__ == "__main__":
    create()
