"""The local placement: what the runner gets when every role is on this machine."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.measure.accounting import ProcAccountant
from pywebbench.measure.ceiling import GeneratorCeiling
from pywebbench.measure.shape_ceiling import ShapeCeiling
from pywebbench.measure.launchers import NginxLauncher, PythonLauncher, RunningServer
from pywebbench.measure.roles import LoadSettings, LocalPlacement
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Session, make_plan
from pywebbench.services.nginx import BINARY
from pywebbench.services.watchdog import Watchdog
from support.behind_server import behind_server
from support.fake_loadgen import FakeLoadGenerator


def _session(stack: str, workload: str = "hello") -> Session:
    options = RunOptions(stacks=(stack,), workloads=(workload,), repeats=1)
    return make_plan(build_catalog(), options, (0, 1)).sessions[0]


@pytest.fixture
def served() -> Iterator[RunningServer]:
    """A plain HTTP server answering every GET with its own name."""
    with behind_server(http11=False) as server:
        yield server


def _local(tmp_path: Path, topology: str, accountant: ProcAccountant, watchdog: Watchdog) -> LocalPlacement:
    return LocalPlacement(None, topology, tmp_path, watchdog, accountant)


def test_loaded_directly_the_front_is_the_server_itself(tmp_path: Path, served: RunningServer) -> None:
    placement = _local(tmp_path, "direct", ProcAccountant(), Watchdog(lambda text: None))
    with placement.front(served, _session("flask:gunicorn-sync"), "l1-x") as front:
        assert (front.host, front.port, front.proxy_role) == (served.host, served.port, None)
    assert isinstance(placement.launcher(_session("flask:gunicorn-sync"), tmp_path), PythonLauncher)
    assert placement.app_environment({"PWB_DSN": "x"}) == {"PWB_DSN": "x"}
    assert placement.db_peak(0) is None and placement.usage(served) == {} and placement.take_pending() == []


@pytest.mark.skipif(not Path(BINARY).exists(), reason="nginx is not installed")
def test_under_topology_nginx_each_server_gets_its_own_nginx_watched_and_accounted(
        tmp_path: Path, served: RunningServer) -> None:
    accountant, watchdog = ProcAccountant(), Watchdog(lambda text: None)
    placement = _local(tmp_path, "nginx", accountant, watchdog)
    session = _session("flask:gunicorn-sync")
    with placement.front(served, session, "l1-flask") as front:
        assert front.port != served.port and front.proxy_role == "nginx-app-flask_gunicorn-sync"
        with urllib.request.urlopen(f"http://{front.host}:{front.port}/hello", timeout=5) as answer:
            assert answer.read() == b"behind"  # through nginx to the server
        enrolled = accountant._roles[front.proxy_role]
        assert enrolled and watchdog._targets
        accountant.retire(front.proxy_role)
        placement.reenroll()  # as after the watchdog restarted it
        assert accountant._roles[front.proxy_role] == enrolled
    assert not watchdog._targets  # unwatched before it stopped on purpose
    placement.reenroll()
    assert front.proxy_role not in accountant._roles or accountant._roles[front.proxy_role] == enrolled


def test_nginx_as_the_server_gets_no_nginx_in_front(tmp_path: Path, served: RunningServer) -> None:
    placement = _local(tmp_path, "nginx", ProcAccountant(), Watchdog(lambda text: None))
    session = _session("nginx:static", "static")
    with placement.front(served, session, "l1-nginx") as front:
        assert front.proxy_role is None and front.port == served.port
    assert isinstance(placement.launcher(session, None), NginxLauncher)


def test_the_local_load_tools_are_the_run_s_generator_its_settle_and_its_ceiling(tmp_path: Path) -> None:
    generator = FakeLoadGenerator()
    tools = _local(tmp_path, "direct", ProcAccountant(), Watchdog(lambda text: None)).load_tools(
        generator, LoadSettings("wrk", True, 5.0, tmp_path / "ceiling", lambda record: None, lambda s: None))
    assert tools.generator is generator and isinstance(tools.ceiling, ShapeCeiling)
    assert isinstance(tools.ceiling.base, GeneratorCeiling)  # nginx static's, for every workload but a shape
    assert getattr(tools.settle, "keywords", {}) == {"generator": "wrk"}
