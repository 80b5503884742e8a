"""nginx in each protocol (services/nginx.py): its listen lines, the run's certificate, the h2c
port's second HTTP/1.1 port for the checks; the generator ceiling memoised per protocol and sent
by h2load for all but h1 (measure/ceiling.py); under `--topology nginx` a front that terminates
TLS and HTTP/2 before an app that speaks HTTP/1.1 (measure/roles.py), real nginx and h2load."""

from __future__ import annotations

import shutil
import ssl
import subprocess
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.catalog.protocols import Protocol, TlsFiles
from pywebbench.catalog.registry import build_catalog
from pywebbench.measure.accounting import ProcAccountant
from pywebbench.measure.ceiling import GeneratorCeiling
from pywebbench.measure.launchers import RunningServer
from pywebbench.measure.roles import LocalPlacement
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Session, make_plan
from pywebbench.results.model import ServiceRecord, TrialSpec
from pywebbench.services.nginx import BINARY, NginxService
from pywebbench.services.watchdog import Watchdog
from support.behind_server import behind_server
from support.fake_loadgen import FakeLoadGenerator

needs_nginx = pytest.mark.skipif(not Path(BINARY).exists(), reason="nginx is not installed")


def _listens(tmp_path: Path, protocol: Protocol) -> list[str]:
    service = NginxService(tmp_path, protocol=protocol, tls=TlsFiles("/run/cert.pem", "/run/key.pem"))
    text = service.render_config(8000, 8001)
    return [line.strip() for line in text.splitlines() if line.strip().startswith(("listen", "ssl_", "sendfile off"))]


@pytest.mark.parametrize(("protocol", "expected"), [
    (Protocol.H1, ["listen 127.0.0.1:8000 backlog=4096;"]),
    (Protocol.H2C, ["listen 127.0.0.1:8000 http2 backlog=4096;", "listen 127.0.0.1:8001 backlog=4096;",
                    "sendfile off;"]),
    (Protocol.H1_TLS, ["listen 127.0.0.1:8000 ssl backlog=4096;", "ssl_certificate /run/cert.pem;",
                       "ssl_certificate_key /run/key.pem;", "ssl_protocols TLSv1.2 TLSv1.3;"]),
    (Protocol.H2_TLS, ["listen 127.0.0.1:8000 ssl http2 backlog=4096;", "ssl_certificate /run/cert.pem;",
                       "ssl_certificate_key /run/key.pem;", "ssl_protocols TLSv1.2 TLSv1.3;"]),
])
def test_nginx_listens_in_the_protocol_asked_with_the_run_s_certificate_for_tls(
        tmp_path: Path, protocol: Protocol, expected: list[str]) -> None:
    assert _listens(tmp_path, protocol) == expected


def test_nginx_over_tls_without_a_certificate_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="needs the run's certificate"):
        NginxService(tmp_path, protocol=Protocol.H2_TLS)


def _spec(protocol: str | None, connections: int = 4) -> TrialSpec:
    return TrialSpec("t", "flask:gunicorn-sync", "hello", connections, 0.5, 0.5, 1, "wrk", stack_cpus=(1,),
                     loadgen_cpus=(0,), protocol=protocol)


@needs_nginx
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the run's certificate")
def test_the_ceiling_is_measured_once_per_protocol_by_the_generator_that_sends_it(tmp_path: Path) -> None:
    records: list[ServiceRecord] = []
    run_generator, h2load = FakeLoadGenerator(), FakeLoadGenerator(name="h2load")
    ceiling = GeneratorCeiling(run_generator, tmp_path / "ceiling", on_record=records.append,
                               tls_dir=tmp_path / "tls")
    ceiling.by_protocol = h2load
    for protocol in (None, "h2-tls", "h1", "h2-tls", "h2c"):
        assert ceiling(_spec(protocol)).rps == 1000.0
    # None (not asked) is h1: the same ceiling as "h1"; every other protocol its own, once
    assert [r.config["protocol"] for r in records] == ["h1", "h2-tls", "h2c"]
    assert {r.protocol.value for r in run_generator.requests} == {"h1"}  # a warm-up and a window
    assert [(r.protocol.value, r.url.split(":")[0]) for r in h2load.requests] == [
        ("h2-tls", "https"), ("h2-tls", "https"), ("h2c", "http"), ("h2c", "http")]
    assert (tmp_path / "tls" / "key.pem").stat().st_mode & 0o077 == 0  # the run's own material, private


def _session(stack: str, protocol: str) -> Session:
    options = RunOptions(stacks=(stack,), workloads=("hello",), repeats=1, topology="nginx", protocol=protocol)
    return make_plan(build_catalog(), options, (0, 1)).sessions[0]


@pytest.fixture
def served() -> Iterator[RunningServer]:
    """A plain HTTP/1.1 server, as an app behind nginx is: it answers every GET with its name."""
    with behind_server(http11=True) as server:
        yield server


def _h2load(url: str, *flags: str) -> str:
    done = subprocess.run(["h2load", "-n", "20", "-c", "2", *flags, url], capture_output=True, text=True,
                          timeout=20, check=False)
    return done.stdout


@needs_nginx
@pytest.mark.skipif(shutil.which("h2load") is None, reason="h2load is not installed")
@pytest.mark.parametrize(("protocol", "spoken"), [("h2c", "h2c"), ("h1-tls", "http/1.1"), ("h2-tls", "h2")])
def test_the_nginx_front_speaks_the_protocol_to_h2load_and_http_1_1_to_the_app(
        tmp_path: Path, served: RunningServer, protocol: str, spoken: str) -> None:
    placement = LocalPlacement(None, "nginx", tmp_path, Watchdog(lambda text: None), ProcAccountant())
    session = _session("flask:gunicorn-sync", protocol)  # Gunicorn sync serves h1 only: nginx serves it
    scheme = "https" if protocol.endswith("tls") else "http"
    with placement.front(served, session, "l1-flask") as front:
        summary = _h2load(f"{scheme}://{front.host}:{front.port}/hello", *(["--h1"] if protocol == "h1-tls" else []))
        assert f"Application protocol: {spoken}" in summary and "20 succeeded" in summary, summary
        context = ssl.create_default_context()
        context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
        url = f"{scheme}://{front.host}:{front.h1_port}/hello"  # where the checks ask, in HTTP/1.1
        with urllib.request.urlopen(url, timeout=5, context=context if scheme == "https" else None) as answer:
            assert answer.read() == b"behind"
        assert (front.check_port is not None) == (protocol == "h2c")
    assert (tmp_path / "tls").exists() == protocol.endswith("tls")
