"""docs/layout.md's workload recipe on real servers: a throwaway route added as one line to a copy of
the apps' route table (apps/pwb_routes.ROUTES) is served by each framework's own router, every app
module under one real server (WSGI, ASGI, a framework's own; both sides of Falcon and Django), and
the throwaway `Workload`'s check passes on every answer (about 1 s a server). The catalog side of
the recipe, and the check naming each place left out: tests/unit/test_recipe_workload.py."""

from __future__ import annotations

import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from pywebbench.catalog.model import LaunchSpec
from pywebbench.catalog.registry import build_catalog
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.catalog.workloads import WORKLOADS, Expected, Workload
from pywebbench.core.procs import ManagedProcess, free_port
from pywebbench.measure.launchers import HOST, base_environment
from pywebbench.stage.envs import EnvironmentBuilder, EnvSpec

THROWAWAY = Workload("recipe-cpu", "/recipe-cpu", "application/json", "the recipe test's own route",
                     WORKLOADS["cpu"].check, knobs=("cpu_size",))
ROUTE_LINE = '    Route("/recipe-cpu", pwb.cpu_body, pwb.APPLICATION_JSON),\n'
"""The one line the recipe adds to the table: an existing body of pwb_common at a path of its own."""
CPU_SIZE = 5000


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of apps/ with the throwaway route in its table, the tree itself untouched."""
    copy = tmp_path_factory.mktemp("recipe") / "apps"
    shutil.copytree(APPS_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    table = copy / "pwb_routes.py"
    text = table.read_text(encoding="utf-8")
    assert text.endswith("\n)\n"), "the route table no longer ends its tuple on the file's last line"
    table.write_text(text[: -len(")\n")] + ROUTE_LINE + ")\n", encoding="utf-8")
    return copy


def _get(port: int, path: str, deadline: float) -> tuple[int, str, bytes]:
    while True:
        try:
            with urllib.request.urlopen(f"http://{HOST}:{port}{path}", timeout=5) as answer:
                return answer.status, answer.headers.get("Content-Type", ""), answer.read()
        except urllib.error.HTTPError as error:
            return error.code, error.headers.get("Content-Type", ""), error.read()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


STACKS = ("flask:gunicorn-sync", "bottle:gunicorn-sync", "falcon:gunicorn-sync", "falcon:uvicorn",
          "django:gunicorn-sync", "django:uvicorn", "hug:gunicorn-sync", "apistar:gunicorn-sync", "starlette:uvicorn",
          "fastapi:uvicorn", "quart:hypercorn", "aioflask:uvicorn", "litestar:uvicorn", "blacksheep:uvicorn",
          "sanic:sanic", "aiohttp:aiohttp", "tornado:tornado")
"""Every app module, each interface of those that offer two, under one server each."""


@pytest.mark.parametrize("stack_id", STACKS)
def test_a_route_added_in_one_line_is_served_by_the_framework_s_own_router(apps: Path, stack_id: str,
                                                                          tmp_path: Path) -> None:
    stack = next(s for s in build_catalog().stacks if s.id == stack_id)
    env = EnvironmentBuilder().ensure(EnvSpec(stack.requirements, stack.overrides, sys.executable))
    port = free_port(HOST)
    python = str(env.path / "bin" / "python")
    argv = [arg.replace(str(APPS_DIR), str(apps))
            for arg in stack.server.build_argv(LaunchSpec(python, stack.framework.module, HOST, port, 1, 1))]
    variables = {**base_environment(str(env.path / "bin")), "PYTHONPATH": str(apps), "VIRTUAL_ENV": str(env.path),
                 "PWB_CPU_SIZE": str(CPU_SIZE), "PWB_DRIVER": stack.driver}
    with ManagedProcess(argv, env=variables, log_dir=tmp_path, name="recipe") as server:
        status, content_type, body = _get(port, THROWAWAY.path, time.monotonic() + 60)
        hello = _get(port, "/hello", time.monotonic() + 5)  # the table's own routes as before
        assert server.poll() is None, server.stderr_tail(15)
    assert hello[0] == 200 and WORKLOADS["hello"].check(hello[2], Expected()) is None, hello
    assert status == 200, (status, body[:200])
    assert content_type.partition(";")[0] == THROWAWAY.media_type
    assert THROWAWAY.check(body, Expected(cpu_size=CPU_SIZE)) is None, body
