"""The connection-shape workloads (issue 50) as the catalog and the plan see them: their answers,
who serves each and the one-line reason where a stack cannot, what a stack's environment gains."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path
from types import ModuleType

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.catalog.shapes import answers, wsprobe
from pywebbench.catalog.shapes.registry import SHAPE_WORKLOADS
from pywebbench.catalog.workloads import WORKLOADS, Expected, get_workload
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import left_out, make_plan

CATALOG = build_catalog()
APPS = Path(__file__).resolve().parents[2] / "src" / "pywebbench" / "apps"
SHAPES = ("idle", "close", "stream", "upload", "sse", "ws-echo")


def _app_module(name: str) -> ModuleType:
    """An app-side module (standard library only) loaded as the stacks load it, from the apps folder."""
    if str(APPS) not in sys.path:
        sys.path.insert(0, str(APPS))
    spec = importlib.util.spec_from_file_location(name, APPS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_every_shape_is_a_workload_registered_once_with_its_own_module() -> None:
    assert tuple(w.name for w in SHAPE_WORKLOADS) == SHAPES
    for name in SHAPES:
        workload = get_workload(name)
        assert workload is WORKLOADS[name] and workload.shape is not None
        assert workload.shape.measures and workload.shape.unit
    assert all(WORKLOADS[n].shape is None for n in ("hello", "db", "static"))  # the built-in ones unchanged


def test_the_harness_computes_the_same_bytes_the_apps_send() -> None:
    app = _app_module("pwb_shapes")
    assert app.CHUNK * app.CHUNKS == answers.STREAM_BODY and len(answers.STREAM_BODY) == 1 << 20
    assert answers.check_stream(answers.STREAM_BODY, Expected()) is None
    assert "1048575 bytes, expected the 1048576" in (answers.check_stream(answers.STREAM_BODY[:-1], Expected()) or "")
    events = b"".join(app.event(k) for k in range(3))
    assert answers.check_events(events, Expected()) is None
    assert answers.check_events(events + app.event(3), Expected()) is not None  # a plain GET sends 3
    assert answers.check_events(b"id: 0\ndata: x\n\n", Expected()) is not None
    assert answers.check_upload(b"1048576", Expected()) is None and answers.check_upload(b"0", Expected())
    assert answers.check_hello(b"Hello World!", Expected()) is None and answers.check_hello(b"Hello", Expected())
    assert app.event_params("n=5&rate=20") == (5, 20.0)
    assert app.event_params("") == (3, 1000.0) and app.event_params("n=x&rate=-1") == (3, 1000.0)
    assert app.event_params(f"n={10**9}")[0] == app.MAX_EVENTS


@pytest.mark.parametrize(("stack", "workload", "reason"), [
    ("flask:gunicorn-sync", "ws-echo", "WSGI has no WebSocket (Gunicorn sync serves WSGI)"),
    ("flask:uwsgi", "ws-echo", "WSGI has no WebSocket"),
    ("go:net-http", "ws-echo", "Go net/http serves the app contract's routes only, not the shape routes"),
    ("go:net-http", "stream", "Go net/http serves the app contract's routes only"),
    ("go:net-http", "upload", "Go net/http serves the app contract's routes only"),
    ("go:net-http", "sse", "Go net/http serves the app contract's routes only"),
    ("nginx:static", "idle", "nginx serves static only"),
    ("nginx:static", "close", "nginx serves static only"),
])
def test_a_combination_a_server_cannot_serve_is_left_out_with_one_line(stack: str, workload: str, reason: str) -> None:
    why = left_out(CATALOG.resolve(stack), get_workload(workload))
    assert why is not None and why.startswith(reason) and "\n" not in why


@pytest.mark.parametrize("stack", ["starlette:uvicorn", "fastapi:hypercorn", "starlette:granian", "aiohttp:aiohttp",
                                   "tornado:tornado", "sanic:sanic", "starlette:gunicorn-uvicorn", "django:uvicorn"])
def test_asgi_and_own_servers_serve_every_shape(stack: str) -> None:
    assert [left_out(CATALOG.resolve(stack), get_workload(w)) for w in SHAPES] == [None] * len(SHAPES)


def test_every_python_stack_serves_the_http_shapes_and_go_the_keep_alive_ones() -> None:
    for stack in CATALOG.stacks:
        if stack.server.native is None:
            assert all(left_out(stack, get_workload(w)) is None for w in ("idle", "close", "stream", "upload", "sse"))
    go = CATALOG.resolve("go:net-http")
    assert left_out(go, get_workload("idle")) is None and left_out(go, get_workload("close")) is None


def test_the_plan_says_each_left_out_combination_and_runs_the_rest() -> None:
    options = RunOptions(stacks=("flask:gunicorn-gthread", "starlette:uvicorn", "go:net-http"),
                         workloads=("hello", "idle", "ws-echo", "sse"))
    plan = make_plan(CATALOG, options, (0, 1))
    skipped = dict(plan.skipped)
    assert skipped["flask:gunicorn-gthread ws-echo"].startswith("WSGI has no WebSocket")
    assert skipped["go:net-http ws-echo"].startswith("Go net/http serves the app contract's routes only")
    assert "go:net-http sse" in skipped and "starlette:uvicorn ws-echo" not in skipped
    served = {s.stack.id: [w.name for w in s.workloads] for s in plan.sessions}
    assert served == {"flask:gunicorn-gthread": ["hello", "idle", "sse"],
                      "starlette:uvicorn": ["hello", "idle", "ws-echo", "sse"], "go:net-http": ["hello", "idle"]}


def test_a_stack_that_serves_none_of_the_workloads_says_why() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync", "starlette:uvicorn"), workloads=("ws-echo",))
    plan = make_plan(CATALOG, options, (0, 1))
    (reason,) = [why for stack, why in plan.skipped if stack == "flask:gunicorn-sync"]
    assert reason == "serves none of the workloads ws-echo: WSGI has no WebSocket (Gunicorn sync serves WSGI)"


def test_uvicorn_gets_a_websocket_library_only_where_ws_echo_runs() -> None:
    def requirements(stack: str, workloads: tuple[str, ...]) -> tuple[str, ...]:
        plan = make_plan(CATALOG, RunOptions(stacks=(stack,), workloads=workloads), (0, 1))
        return plan.sessions[0].stack.requirements

    assert "websockets==15.0.1" in requirements("starlette:uvicorn", ("hello", "ws-echo"))
    assert "websockets==15.0.1" in requirements("fastapi:gunicorn-uvicorn", ("ws-echo",))
    assert not any(r.startswith("websockets") for r in requirements("starlette:uvicorn", ("hello", "idle")))
    assert not any(r.startswith("websockets") for r in requirements("fastapi:hypercorn", ("ws-echo",)))  # wsproto


def test_the_websocket_probe_frames_as_rfc_6455_says() -> None:
    assert wsprobe.accept_key("dGhlIHNhbXBsZSBub25jZQ==") == "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="  # RFC 6455 1.3
    framed = wsprobe.frame(wsprobe.TEXT, b"Hello", b"\x37\xfa\x21\x3d")
    assert framed == bytes.fromhex("818537fa213d7f9f4d5158")  # RFC 6455 5.7, a masked "Hello"
    assert wsprobe.frame(wsprobe.TEXT, b"x" * 300, b"\0\0\0\0")[1:4] == bytes([0xFE, 1, 44])


def test_the_probe_says_what_a_server_without_websocket_answered(tmp_path: Path) -> None:
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        why = wsprobe.echo("127.0.0.1", server.server_address[1], "/ws", b"hi", timeout_s=2.0)
    finally:
        server.shutdown()
    assert why is not None and re.match(r"/ws: no WebSocket upgrade: 'HTTP/1.0 404", why)
