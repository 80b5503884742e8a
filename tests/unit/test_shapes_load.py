"""The connection shapes' load: each window's request as its shape has it, the generator each goes
to and its argv, the Go driver's result read back, the file limits, the ceilings and their checks,
and the app-side routes (the WSGI and ASGI wrappers, standard library only)."""

from __future__ import annotations

import asyncio
import io
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pywebbench.analyze.rechecks import recorded_ceilings, rechecked
from pywebbench.catalog.shapes import idle, sse, ws_echo
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.oha import Oha
from pywebbench.loadgen.registry import GENERATORS, window_generator
from pywebbench.loadgen.shapes import wait_bound_s, Shapes, parse_shapes
from pywebbench.loadgen.shaping import shaped
from pywebbench.loadgen.wrk import Wrk
from pywebbench.measure.ceiling import CeilingReading
from pywebbench.measure.checks import trial_checks
from pywebbench.measure.filelimits import nofile_needed, nofile_prefix
from pywebbench.measure.shape_ceiling import ShapeCeiling, paced_problem
from pywebbench.results.model import ResultSet, ServiceRecord, SocketErrors, TrialResult, TrialSpec, TrialStatus
from support.builders import header, stack
from support.fake_loadgen import FakeLoadGenerator, synthetic_result

APPS = Path(__file__).resolve().parents[2] / "src" / "pywebbench" / "apps"
BASE = LoadRequest(url="http://127.0.0.1:9000/hello", connections=10000, duration_s=2.0, cpus=(0,), label="w")


def _result(**overrides: Any) -> dict[str, Any]:
    data: dict[str, Any] = {
        "tool": "shapes idle", "duration_s": 2.0, "requests": 400,
        "errors": {"connect": 0, "read": 0, "write": 0, "timeout": 0}, "wrong": 0,
        "latency_ms": {"mean": 1.0, "stdev": 0.5, "max": 9.0, "percentiles": [[50, 0.8], [99, 4.0], [100, 9.0]]},
        "bytes_read": 4800, "rate": 200, "nofile": 20000,
        "connections": {"asked": 10000, "held": 9990, "refused": 0, "closed": 10, "open_s": 1.5},
        "memory": {"rss_base_kb": 30000, "rss_held_kb": 130000, "rss_end_kb": 131000, "sock_pages_base": 10,
                   "sock_pages_held": 2510, "tcp_inuse_base": 10, "tcp_inuse_held": 20010, "server_nofile": 11024,
                   "processes": 1},
    }
    data.update(overrides)
    return data


def test_a_shape_with_a_go_driver_goes_to_it_whatever_the_run_s_generator() -> None:
    request = shaped(BASE, "idle", (42,))
    assert request.drive == idle.WORKLOAD.shape.drive and request.server_pids == (42,)  # type: ignore[union-attr]
    for configured in ("wrk", "oha", "ab", "vegeta", "shapes"):
        assert window_generator(configured, request) == "shapes"
    assert window_generator("shapes", BASE) == "wrk"  # it sends nothing else
    assert window_generator("shapes", replace(BASE, rate=10.0)) == "oha"
    assert GENERATORS["shapes"]().name == "shapes"


def test_the_built_in_workloads_load_as_before() -> None:
    assert shaped(BASE, "hello", (42,)) == BASE
    assert shaped(BASE, "no-such-workload") == BASE


def test_close_turns_keep_alive_off_in_wrk_and_oha() -> None:
    request = shaped(replace(BASE, connections=50), "close")
    assert request.keepalive is False and request.drive is None and window_generator("wrk", request) == "wrk"
    argv = Wrk().command(request, script=Path("/x.lua"))
    assert argv[argv.index("--header") + 1] == "Connection: close"
    assert "--disable-keepalive" in Oha(binary="oha").command(request, Path("r.json"), Path("r.db"))


def test_upload_sends_a_mebibyte_body_with_post_and_stream_a_plain_get() -> None:
    request = shaped(replace(BASE, url="http://127.0.0.1:9000/upload"), "upload")
    (post,) = request.mix
    assert (post.method, post.path, len(post.body), set(post.body)) == ("POST", "/upload", 1 << 20, {ord("u")})
    assert shaped(replace(BASE, url="http://127.0.0.1:9000/stream"), "stream") == \
        replace(BASE, url="http://127.0.0.1:9000/stream")


@pytest.mark.parametrize(("workload", "command", "flags"), [
    ("idle", "idle", ["-active", "4", "-rate", "200"]),
    ("sse", "sse", ["-event-rate", "10"]),
    ("ws-echo", "wsecho", ["-size", "32"]),
])
def test_the_go_driver_s_argv(workload: str, command: str, flags: list[str]) -> None:
    request = shaped(replace(BASE, timeout_s=5.0), workload, (7, 8))
    argv = Shapes(binary="/bin/shapes").command(request, Path("/tmp/w.json"))
    assert argv == ["taskset", "--cpu-list", "0", "/bin/shapes", command, "-url", BASE.url, "-connections", "10000",
                    "-duration", "2000ms", "-timeout", "5000ms", "-dialers", "256", "-out", "/tmp/w.json",
                    "-pids", "7,8", *flags]
    assert "-pids" not in Shapes(binary="/bin/shapes").command(shaped(BASE, workload), Path("w.json"))
    # 40 batches of 256, each up to a connect and an answer's 5 s, before the 2 s window
    assert wait_bound_s(request) == 40 * 10 + 2 + 20 + 60


def test_the_go_driver_s_result_reads_back_with_its_connections_and_memory() -> None:
    load = parse_shapes(_result(), ("shapes", "idle"))
    assert (load.generator, load.requests, load.rps, load.rate, load.latency.at(99.0)) == ("shapes", 400, 200.0,
                                                                                          200.0, 4.0)
    figures = load.shape
    assert figures is not None and (figures.asked, figures.held, figures.closed, figures.nofile) == (10000, 9990, 10,
                                                                                                   20000)
    assert figures.server_nofile == 11024 and figures.rss_per_connection_kb == pytest.approx(10.0)
    assert figures.socket_kb_per_connection == pytest.approx(2500 * figures.page_kb / 10000)
    bare = parse_shapes(_result(memory=None, rate=None, wrong=3,
                                errors={"connect": 5, "read": 1, "write": 0, "timeout": 2}))
    assert bare.shape is not None and bare.shape.rss_per_connection_kb is None and bare.rate is None
    assert bare.socket_errors == SocketErrors(connect=5, read=1, timeout=2) and bare.non_2xx == 3 and bare.errors == 11


def test_the_server_s_file_limit_is_raised_only_past_what_it_inherits() -> None:
    assert nofile_needed([100, 10000]) == 11024
    assert nofile_prefix([10000], limits=(20000, 20000), root=True) == []
    assert nofile_prefix([10000], limits=(1024, 4096), root=True) == ["prlimit", "--nofile=11024:11024", "--"]
    assert nofile_prefix([10000], limits=(1024, 524288), root=True) == ["prlimit", "--nofile=11024:524288", "--"]
    assert nofile_prefix([10000], limits=(1024, 4096), root=False) == ["prlimit", "--nofile=4096:4096", "--"]
    assert nofile_prefix([10000], limits=(4096, 4096), root=False) == []  # nothing more to give


def _spec(workload: str, connections: int = 100) -> TrialSpec:
    return TrialSpec("t", "starlette:uvicorn", workload, connections, 1.0, 0.0, 1, "wrk", stack_cpus=(1,),
                     loadgen_cpus=(0,))


def test_a_shape_s_ceiling_is_its_own_load_against_the_server_that_costs_nothing(tmp_path: Path) -> None:
    seen: list[ServiceRecord] = []
    nginx = FakeLoadGenerator()
    ceiling = ShapeCeiling(lambda spec: CeilingReading(rps=1.0), nginx, tmp_path, on_record=seen.append)
    assert ceiling(_spec("hello")).rps == 1.0  # not a shape: nginx static's, as before
    assert nginx.requests == []
    assert paced_problem(parse_shapes(_result(connections={"asked": 100, "held": 100, "refused": 0, "closed": 0,
                                                           "open_s": 0.1}))) is None
    assert "held 9990 of 10000" in (paced_problem(parse_shapes(_result())) or "")
    slow = parse_shapes(_result(requests=100, connections={"asked": 5, "held": 5, "refused": 0, "closed": 0,
                                                          "open_s": 0.1}))
    assert "kept 50 of 200/s" in (paced_problem(slow) or "")
    assert "3 errors" in (paced_problem(parse_shapes(_result(wrong=3))) or "")


def test_a_shape_window_near_its_ceiling_is_said_in_its_own_unit() -> None:
    load = replace(synthetic_result(9000.0, 1.0), generator="shapes")
    trial = TrialResult(_spec("ws-echo"), stack("starlette:uvicorn"), TrialStatus.OK, "", "", load=load)
    (near,) = [c for c in trial_checks(trial, 10000.0) if c.startswith("near-ceiling")]
    assert near == ("near-ceiling: 9,000 messages/s is 90% of the 10,000 messages/s shapes reaches against a Go "
                    "server that does nothing (shapes serve)")
    hello = TrialResult(_spec("hello"), stack("starlette:uvicorn"), TrialStatus.OK, "", "", load=load)
    assert any("req/s fake" not in c and "against nginx static" in c for c in trial_checks(hello, 10000.0))


def test_reports_recheck_a_shape_against_its_own_ceiling_never_nginx_s(tmp_path: Path) -> None:
    setting = {"connections": 100, "loadgen_cpus": [0], "stack_cpus": [1]}
    services = (ServiceRecord("generator-ceiling", "nginx", {**setting, "rps": 10000.0, "errors": 0}),
                ServiceRecord("shape-ceiling", "shapes", {**setting, "workload": "ws-echo", "rps": 50000.0, "errors": 0}),
                ServiceRecord("shape-ceiling", "shapes", {**setting, "workload": "sse", "rps": 1000.0, "errors": 0}))
    ceilings = recorded_ceilings(ResultSet(header(), (), services=services))
    load = synthetic_result(9000.0, 1.0)
    ws = TrialResult(_spec("ws-echo"), stack("starlette:uvicorn"), TrialStatus.OK, "", "", load=load)
    sse_trial = replace(ws, spec=_spec("sse"))
    hello = replace(ws, spec=_spec("hello"))
    assert not any(c.startswith("near-ceiling") for c in rechecked(ws, ceilings))  # 9,000 of 50,000
    assert not any(c.startswith("near-ceiling") for c in rechecked(sse_trial, ceilings))  # paced: no ceiling rate
    assert any(c.startswith("near-ceiling") for c in rechecked(hello, ceilings))  # 9,000 of nginx's 10,000


# -- the app side: the wrappers answer the shape routes and pass everything else ----------------------

def _apps() -> None:
    if str(APPS) not in sys.path:
        sys.path.insert(0, str(APPS))


def _call_wsgi(app: Any, path: str, query: str = "", body: bytes = b"") -> tuple[str, dict[str, str], bytes]:
    started: dict[str, Any] = {}

    def start_response(status: str, headers: list[tuple[str, str]]) -> None:
        started.update(status=status, headers=dict(headers))

    environ = {"PATH_INFO": path, "QUERY_STRING": query, "REQUEST_METHOD": "POST" if body else "GET",
               "CONTENT_LENGTH": str(len(body)) if body else "", "wsgi.input": io.BytesIO(body)}
    data = b"".join(app(environ, start_response))
    return started["status"], started["headers"], data


def test_the_wsgi_wrapper_serves_the_shapes_and_passes_the_rest() -> None:
    _apps()
    import pwb_shapes_wsgi

    def framework(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [b"framework " + environ["PATH_INFO"].encode()]

    app = pwb_shapes_wsgi.wrap(framework)
    status, headers, data = _call_wsgi(app, "/stream")
    assert status == "200 OK" and headers["Content-Length"] == str(1 << 20) and data == bytes(range(256)) * 4096
    assert _call_wsgi(app, "/upload", body=b"u" * 300_000)[2] == b"300000"
    status, headers, data = _call_wsgi(app, "/sse", "n=4&rate=1000")
    assert headers["Content-Type"] == "text/event-stream" and data.count(b"\ndata: ") == 4
    assert _call_wsgi(app, "/hello")[2] == b"framework /hello" and _call_wsgi(app, "/ws")[2] == b"framework /ws"


def test_the_asgi_wrapper_serves_the_shapes_echoes_websocket_and_passes_the_rest() -> None:
    _apps()
    import pwb_shapes_asgi

    async def framework(scope: Any, receive: Any, send: Any) -> None:
        await send({"type": "passed", "scope": scope["type"], "path": scope.get("path")})

    app = pwb_shapes_asgi.wrap(framework)

    async def call(scope: dict[str, Any], incoming: list[dict[str, Any]]) -> list[dict[str, Any]]:
        sent: list[dict[str, Any]] = []
        queue = list(incoming)

        async def receive() -> dict[str, Any]:
            if queue:
                return queue.pop(0)
            await asyncio.sleep(3600)  # a client that stays
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        await asyncio.wait_for(app(scope, receive, send), 10)
        return sent

    async def scenario() -> None:
        stream = await call({"type": "http", "path": "/stream"}, [])
        assert b"".join(m.get("body", b"") for m in stream) == bytes(range(256)) * 4096
        upload = await call({"type": "http", "path": "/upload"},
                            [{"type": "http.request", "body": b"u" * 1000, "more_body": True},
                             {"type": "http.request", "body": b"u" * 24, "more_body": False}])
        assert upload[-1]["body"] == b"1024"
        events = await call({"type": "http", "path": "/sse", "query_string": b"n=3&rate=1000"},
                            [{"type": "http.request", "body": b""}])
        assert b"".join(m.get("body", b"") for m in events).count(b"\ndata: ") == 3
        ws = await call({"type": "websocket", "path": "/ws"},
                        [{"type": "websocket.connect"}, {"type": "websocket.receive", "text": "hi"},
                         {"type": "websocket.receive", "bytes": b"\x00\x01"}, {"type": "websocket.disconnect"}])
        assert ws == [{"type": "websocket.accept"}, {"type": "websocket.send", "text": "hi"},
                      {"type": "websocket.send", "bytes": b"\x00\x01"}]
        assert (await call({"type": "lifespan"}, [])) == [{"type": "passed", "scope": "lifespan", "path": None}]
        assert (await call({"type": "http", "path": "/hello"}, []))[0]["path"] == "/hello"

    asyncio.run(scenario())


def test_the_module_constants_are_what_the_docs_say() -> None:
    assert (idle.ACTIVE_CONNECTIONS, idle.ACTIVE_RATE, sse.EVENT_RATE, ws_echo.MESSAGE_BYTES) == (4, 200.0, 10.0, 32)
