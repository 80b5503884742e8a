"""The protocol knob: parsed, refused in one line where it cannot run, each server's declared
protocols on its command line; h2load's summary read from real runs (tests/unit/fixtures/h2load:
h2load 1.52 against Granian and Hypercorn here); the run's TLS material private."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from pywebbench.catalog.model import LaunchSpec
from pywebbench.catalog.protocols import Protocol, TlsFiles, protocol_of
from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.h2load import H2load, parse_h2load
from pywebbench.loadgen.registry import window_generator
from pywebbench.plan.options import RunOptions
from pywebbench.plan.protocol_plan import app_protocol, protocol_left_out, send_problems
from pywebbench.plan.sessions import make_plan
from pywebbench.plan.sweep import Knob, parse_knob
from pywebbench.results.model import TrialSpec
from pywebbench.stage.tls import tls_material

FIXTURES = Path(__file__).with_name("fixtures") / "h2load"


def test_the_knob_reads_each_protocol_and_refuses_an_unknown_one_in_one_line() -> None:
    axis = parse_knob("protocol=h1,H2C,h1-tls,h2-tls,h2c")
    assert axis.knob is Knob.PROTOCOL and axis.values == ("h1", "h2c", "h1-tls", "h2-tls")
    with pytest.raises(UserError) as found:
        parse_knob("protocol=h3")
    assert found.value.problems == ["protocol must be one of h1, h2c, h1-tls, h2-tls, got 'h3'"]


def _plan(**options: object) -> list[str]:
    opts = RunOptions(**{"workloads": ("hello",), "repeats": 1, **options})
    plan = make_plan(build_catalog(), opts.validate(), (0, 1))
    return [f"{s.stack.id} {t.protocol}" for s in plan.sessions for t in s.trials]


def test_a_recorded_protocol_no_run_writes_is_a_one_line_refusal() -> None:
    """An edited results file's `"protocol": false` reaches the reader as 'False' (the fuzz test's find)."""
    assert protocol_of(None) is Protocol.H1 and protocol_of("h2c") is Protocol.H2C
    with pytest.raises(UserError) as refused:
        protocol_of("False")
    assert "h1, h2c, h1-tls, h2-tls" in str(refused.value) and "\n" not in str(refused.value)


def test_a_stack_that_cannot_serve_the_protocol_is_refused_in_one_line_and_skipped_beside_one_that_can() -> None:
    with pytest.raises(UserError) as found:
        _plan(stacks=("starlette:uvicorn",), protocol="h2c")
    assert found.value.problems == ["starlette:uvicorn: Uvicorn (uvicorn) serves h1, h1-tls here, not h2c"]
    assert _plan(stacks=("starlette:uvicorn", "starlette:granian"), protocol="h2c") == ["starlette:granian h2c"]
    assert _plan(stacks=("starlette:granian",)) == ["starlette:granian None"]  # h1 unchanged, not recorded


def test_what_h2load_cannot_send_is_refused_before_anything_starts_one_line_each() -> None:
    with pytest.raises(UserError) as found:
        _plan(stacks=("starlette:granian",), protocol="h2-tls", rate=100.0, generator="oha", topology="nginx")
    assert found.value.problems == [
        "--protocol h2-tls is sent by h2load, closed loop only: drop --rate, or use --protocol h1"]
    assert send_problems(Protocol.H2C, rate=None, placed=True, topology="nginx", workloads=()) == [
        "--protocol h2c is sent by h2load on this machine: it does not run on --hosts or the netns rig",
        "--protocol h2c: the proxy role's nginx on another host proxies h1 only"]


def test_under_the_nginx_topology_nginx_serves_the_protocol_for_a_server_that_cannot() -> None:
    stacks = ("starlette:uvicorn", "flask:gunicorn-sync", "starlette:granian")
    assert _plan(stacks=stacks, protocol="h2c", topology="nginx") == [
        "starlette:uvicorn h2c", "flask:gunicorn-sync h2c", "starlette:granian h2c"]
    # nginx serving the file itself has no nginx in front: left out as under the direct topology
    with pytest.raises(UserError) as found:
        _plan(stacks=("nginx:static",), workloads=("static",), protocol="h2-tls", topology="nginx")
    assert found.value.problems == ["nginx:static: nginx (event workers) serves h1 here, not h2-tls"]
    gunicorn = build_catalog().resolve("flask:gunicorn-sync")
    assert protocol_left_out(gunicorn, Protocol.H2_TLS) == "Gunicorn (sync) serves h1 here, not h2-tls"
    assert protocol_left_out(gunicorn, Protocol.H2_TLS, "nginx") is None


@pytest.mark.parametrize(("stack", "topology", "expected"), [
    ("starlette:granian", "direct", Protocol.H2_TLS),  # it terminates TLS itself, with the certificate
    ("starlette:granian", "nginx", Protocol.H1),  # nginx does: the app speaks HTTP/1.1 in the clear
    ("flask:gunicorn-sync", "nginx", Protocol.H1),
])
def test_who_terminates_the_protocol(stack: str, topology: str, expected: Protocol) -> None:
    spec = TrialSpec("t", stack, "hello", 1, 1.0, 0.0, 1, "wrk", topology=topology, protocol="h2-tls")
    assert app_protocol(build_catalog().resolve(stack), spec) is expected


def test_hypercorn_serves_h2_but_h1_over_tls_is_left_out_with_why() -> None:
    stack = build_catalog().resolve("starlette:hypercorn")
    assert protocol_left_out(stack, Protocol.H2C) is None and protocol_left_out(stack, Protocol.H2_TLS) is None
    assert protocol_left_out(stack, Protocol.H1_TLS) == "Hypercorn (asyncio) serves h1, h2c, h2-tls here, not h1-tls"


@pytest.mark.parametrize(("stack", "flags"), [
    ("starlette:granian", ["--ssl-certificate", "C", "--ssl-keyfile", "K"]),
    ("starlette:hypercorn", ["--certfile", "C", "--keyfile", "K"]),
    ("starlette:uvicorn", ["--ssl-certfile", "C", "--ssl-keyfile", "K"]),
    ("flask:gunicorn-gthread", ["--certfile", "C", "--keyfile", "K"]),
])
def test_each_tls_server_gets_the_run_s_certificate_on_its_own_flags(stack: str, flags: list[str]) -> None:
    server = build_catalog().resolve(stack).server
    plain = LaunchSpec("python", "app_x", "127.0.0.1", 1, 1, 1)
    argv = server.build_argv(LaunchSpec("python", "app_x", "127.0.0.1", 1, 1, 1, tls=TlsFiles("C", "K")))
    assert Protocol.H1_TLS in server.protocols or Protocol.H2_TLS in server.protocols
    assert [a for a in argv if a not in server.build_argv(plain)] == flags


def test_every_protocol_but_h1_goes_to_h2load_closed_loop_with_streams_and_a_time_bound() -> None:
    request = LoadRequest(url="https://127.0.0.1:1/hello", connections=8, duration_s=0.5, protocol=Protocol.H1_TLS)
    assert window_generator("wrk", request) == "h2load"
    assert window_generator("wrk", LoadRequest(url="http://127.0.0.1:1/", connections=1, duration_s=1.0)) == "wrk"
    argv = H2load().command(request, Path("/tmp/log.tsv"))
    assert argv[argv.index("-c") + 1] == "8" and argv[argv.index("-m") + 1] == "1"
    assert argv[argv.index("-D") + 1] == "1" and "--h1" in argv and argv[-1] == request.url


def test_h2load_s_summary_of_a_real_h2c_run() -> None:
    report = parse_h2load((FIXTURES / "granian-h2c.txt").read_text())
    load = report.load
    assert report.negotiated == "h2c"
    assert (load.requests, load.duration_s, load.errors, load.bytes_read) == (7921, 1.0, 0, 309423)
    assert (load.latency.mean_ms, load.latency.stdev_ms, load.latency.max_ms) == (0.485, 1.24, 13.76)
    assert load.latency.percentiles == ()  # h2load's summary has none; without its log none is made up


def test_percentiles_come_from_h2load_s_log_of_every_answer() -> None:
    log = (FIXTURES / "hypercorn-h2-tls.tsv").read_text()
    report = parse_h2load((FIXTURES / "hypercorn-h2-tls.txt").read_text(), log)
    assert report.negotiated == "h2" and report.load.requests == 754 == len(log.splitlines())
    p50, p99 = report.load.latency.at(50.0), report.load.latency.at(99.0)
    assert p50 is not None and p99 is not None and 0.565 <= p50 <= p99 <= report.load.latency.max_ms


def test_answers_h2load_could_not_read_are_errors() -> None:
    # Hypercorn's h11 writes "HTTP/1.1 200 " without a reason phrase: h2load --h1 fails every answer.
    load = parse_h2load((FIXTURES / "hypercorn-h1-tls.txt").read_text()).load
    assert load.requests == 995 and load.socket_errors.read == 995 and load.errors == 995


def test_the_run_s_tls_material_is_private(tmp_path: Path) -> None:
    files = tls_material(tmp_path / "run" / "tls")
    assert stat.S_IMODE((tmp_path / "run" / "tls").stat().st_mode) == 0o700
    assert stat.S_IMODE(Path(files.key).stat().st_mode) == 0o600
    assert Path(files.certificate).read_text().startswith("-----BEGIN CERTIFICATE-----")
    assert Path(files.key).read_text().startswith("-----BEGIN PRIVATE KEY-----")  # PKCS#8, as Granian reads
    assert tls_material(tmp_path / "run" / "tls") == files  # once per run


def test_a_run_h2load_ended_early_is_read_in_the_unit_it_printed() -> None:
    # h2load prints its time in us, ms or s; a window whose connections all ended before -D's end
    # printed "finished in 412.50ms" (CI at af6a815) and was once an unreadable summary
    summary = (FIXTURES / "granian-h2c.txt").read_text().replace("finished in 1.00s", "finished in 412.50ms")
    assert parse_h2load(summary).load.duration_s == pytest.approx(0.4125)
