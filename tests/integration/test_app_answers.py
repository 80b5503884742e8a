"""`pywebbench app`'s answer check on apps that answer differently on each server without being
wrong: a Flask app that echoes its request (the Host header carries each server's port, in the
body and a header) and one that reports its own timing (`query_ms`, left out with
--ignore-field), under gunicorn-sync and waitress over two launches: no "answers differently"
line. Beside them, answers that do depend on the server (its SERVER_SOFTWARE) are named once
per server and request, by JSON path or by byte with an excerpt. One run, 1 s windows, 2 rounds."""

from __future__ import annotations

import textwrap
from pathlib import Path

from pywebbench.results.store import load_results
from .conftest import pywebbench

SHORT = ("--duration", "1", "--rounds", "2", "--rounds-per-launch", "1", "--warmup", "0.2", "--settle", "0.1",
         "--connections", "4")


def _app(root: Path) -> None:
    (root / "requirements.txt").write_text("flask==3.1.3\n")
    (root / "echo.py").write_text(textwrap.dedent('''
        import time
        from flask import Flask, jsonify, request

        app = Flask(__name__)

        @app.get("/echo")
        def echo():
            answer = jsonify(host=request.host, url=request.url, port=request.environ["SERVER_PORT"],
                             headers=dict(request.headers))
            answer.headers["X-Echo-Host"] = request.host
            return answer

        @app.get("/timed")
        def timed():
            started = time.perf_counter()
            rows = [{"id": i, "name": f"row-{i}"} for i in range(20)]
            return jsonify(rows=rows, query_ms=(time.perf_counter() - started) * 1000)

        def _served_by():
            return "gunicorn" if "gunicorn" in request.environ.get("SERVER_SOFTWARE", "") else "other"

        @app.get("/which")
        def which():
            return jsonify(rows=[{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": _served_by()}])

        @app.get("/text")
        def text():
            return "count: 4, served by " + _served_by() + ", thank you", {"Content-Type": "text/plain"}
    '''))


def test_echoed_ports_and_ignored_timing_are_not_differences_but_the_server_is(tmp_path: Path) -> None:
    root = tmp_path / "app"
    root.mkdir()
    _app(root)
    out = tmp_path / "run"
    done = pywebbench(
        "app", "--app", "echo:app", "--app-dir", str(root), "--requirements", str(root / "requirements.txt"),
        "--request", "GET /echo", "--request", "GET /timed", "--request", "GET /which", "--request", "GET /text",
        "--ignore-field", "query_ms", "--server", "gunicorn-sync", "--server", "waitress", *SHORT, "--out", str(out))
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a busy shared machine flags windows
    results = load_results(out)
    assert {t.spec.launch for t in results.trials} == {1, 2}  # the answers were compared at each launch
    differs = [line for line in done.stderr.splitlines() if "differently" in line]
    # with no majority of two, the first server's answer is the reference; each line once, not at each launch
    assert differs == [
        'app:waitress answers app GET /text differently from app:gunicorn-sync: byte 20: '
        "'count: 4, served by other, thank you' != 'count: 4, served by gunicorn, thank you' (36 and 39 bytes)",
        'app:waitress answers app GET /which differently from app:gunicorn-sync: rows[3].name: "other" != "gunicorn"',
    ], done.stderr[-3000:]
    assert results.header.options["app"]["ignore_fields"] == ["query_ms"]


def test_a_malformed_field_path_is_one_line_and_exit_2(tmp_path: Path) -> None:
    done = pywebbench("app", "--app", "echo:app", "--app-dir", str(tmp_path), "--ignore-field", "rows[",
                      "--out", str(tmp_path / "run"))
    assert done.returncode == 2, done.stderr[-3000:]
    assert "--ignore-field: not a field path" in done.stderr and "'[' without ']'" in done.stderr
    assert not (tmp_path / "run").exists()
