"""The connection-shape workloads (issue 50) for real: each for one window on a stack that serves
it, the one-line reason where a stack cannot, and 10,000 idle connections held on an async stack."""

from __future__ import annotations

from pathlib import Path

from pywebbench.results.store import load_results

from .conftest import pywebbench

SHAPES = ("idle", "close", "stream", "upload", "sse", "ws-echo")


def test_each_shape_for_one_window_and_the_reason_where_a_stack_cannot_serve_it(tmp_path: Path) -> None:
    # 0.4 s windows (wrk's still take a whole second), no warmup (each window still follows its own
    # server start and answer checks), and a 2 s request timeout: Gunicorn gthread's /sse clients
    # past its threads wait out the timeout, which was 5 s of that window's 6
    args = ["run", "--duration", "0.4", "--warmup", "0", "--timeout", "2", "--connections", "20",
            "--repeats", "1", "--method", "restart", "--out", str(tmp_path),
            "--stack", "starlette:uvicorn", "--stack", "flask:gunicorn-gthread", "--stack", "go:net-http",
            "--stack", "nginx:static"]
    for workload in SHAPES:
        args += ["--workload", workload]
    done = pywebbench(*args)
    # exit 1: a sync server's threads each hold one stream, so Gunicorn gthread's clients past them
    # time out on /sse (the shape's finding, an invalid window); every other window is valid
    assert done.returncode in (0, 1), done.stderr[-3000:]
    lines = done.stderr.splitlines()
    for line in ("skipped flask:gunicorn-gthread ws-echo: WSGI has no WebSocket (Gunicorn gthread serves WSGI)",
                 "skipped go:net-http stream: Go net/http serves the app contract's routes only, not the shape routes",
                 "skipped go:net-http upload: Go net/http serves the app contract's routes only, not the shape routes",
                 "skipped go:net-http sse: Go net/http serves the app contract's routes only, not the shape routes",
                 "skipped go:net-http ws-echo: Go net/http serves the app contract's routes only, not the shape routes",
                 "skipped nginx:static: serves none of the workloads idle, close, stream, upload, sse, ws-echo: "
                 "nginx serves static only"):
        assert line in lines, done.stderr[-3000:]
    results = load_results(tmp_path)
    ran = {(t.spec.stack_id, t.spec.workload): t for t in results.trials}
    assert set(ran) == {("starlette:uvicorn", w) for w in SHAPES} | {("flask:gunicorn-gthread", w) for w in SHAPES[:-1]} \
        | {("go:net-http", "idle"), ("go:net-http", "close")}
    for (stack, workload), trial in ran.items():
        assert trial.status.value == "ok", (stack, workload, trial.error)
        load = trial.load
        assert load is not None and load.requests > 0, (stack, workload)
        assert trial.valid or (stack, workload) == ("flask:gunicorn-gthread", "sse"), (stack, workload, trial.checks)
    gthread_sse = ran[("flask:gunicorn-gthread", "sse")].load
    assert gthread_sse is not None and gthread_sse.shape is not None
    assert gthread_sse.shape.held + gthread_sse.shape.refused == 20  # refused ones waited for a thread, timed out
    on_uvicorn = {w: ran[("starlette:uvicorn", w)].load for w in SHAPES}
    assert all(on_uvicorn[w].generator == "shapes" and on_uvicorn[w].shape is not None  # type: ignore[union-attr]
               for w in ("idle", "sse", "ws-echo"))
    idle = on_uvicorn["idle"].shape  # type: ignore[union-attr]
    assert idle is not None and idle.held == 20 and idle.rss_per_connection_kb is not None and idle.server_nofile
    assert on_uvicorn["stream"].bytes_read >= on_uvicorn["stream"].requests * (1 << 20)  # type: ignore[union-attr]
    assert on_uvicorn["close"].generator == "wrk" and "Connection: close" in on_uvicorn["close"].command  # type: ignore[union-attr]
    assert any(e.requirements and "websockets==15.0.1" in e.requirements for e in results.environments.values())
    ceilings = {s.config["workload"]: s.config for s in results.services if s.name == "shape-ceiling"}
    assert set(ceilings) == set(SHAPES) and all("error" not in c for c in ceilings.values()), ceilings
    assert all(not any(c.startswith("instrument-failed") for c in t.checks) for t in results.trials), \
        [t.checks for t in results.trials]


def test_ten_thousand_idle_connections_are_held_for_a_window_on_an_async_stack(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "starlette:uvicorn", "--workload", "idle", "--connections", "10000",
                      "--duration", "1", "--warmup", "0", "--repeats", "1", "--method", "restart",
                      "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    (trial,) = load_results(tmp_path).trials
    assert trial.status.value == "ok" and trial.load is not None, trial.error
    held = trial.load.shape
    assert held is not None and (held.asked, held.held, held.refused, held.closed) == (10000, 10000, 0, 0), held
    assert trial.load.errors == 0 and trial.load.requests > 0
    assert held.nofile >= 10000 and held.server_nofile is not None and held.server_nofile >= 10000
    assert held.rss_per_connection_kb is not None and held.rss_per_connection_kb > 0
    assert held.socket_kb_per_connection is not None
