
import pytest

from pywebbench.catalog.model import ConcurrencyType, Interface
from pywebbench.catalog.registry import BASELINE_STACK, build_catalog
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.core.errors import UserError

CATALOG = build_catalog()


def test_every_framework_has_an_app_module() -> None:
    for framework in CATALOG.frameworks:
        assert framework.native or (APPS_DIR / f"{framework.module}.py").exists(), framework.name


def test_stack_ids_are_unique_and_include_the_baseline() -> None:
    ids = [s.id for s in CATALOG.stacks]
    assert len(ids) == len(set(ids))
    assert BASELINE_STACK in ids


def test_seed_frameworks_and_servers_are_catalogued() -> None:
    frameworks = {f.name for f in CATALOG.frameworks}
    assert {"flask", "bottle", "falcon", "django", "sanic", "starlette", "fastapi", "aiohttp", "tornado",
            "quart", "aioflask", "hug", "apistar", "litestar", "blacksheep"} <= frameworks
    servers = {s.key for s in CATALOG.servers}
    assert {"gunicorn-sync", "gunicorn-gthread", "gunicorn-gevent", "gunicorn-eventlet", "gunicorn-meinheld",
            "gunicorn-uvicorn", "uwsgi", "meinheld", "bjoern", "waitress", "cherrypy", "flask-dev",
            "uvicorn", "uvicorn-asyncio", "hypercorn", "granian", "sanic", "aiohttp", "tornado"} <= servers


def test_no_stack_pairs_an_asgi_app_with_a_wsgi_server() -> None:
    for stack in CATALOG.stacks:
        if stack.server.interface is not Interface.OWN:
            assert stack.server.interface in stack.framework.interfaces, stack.id


def test_invalid_pairing_is_refused_with_the_reason() -> None:
    with pytest.raises(UserError, match="an ASGI app and gunicorn-sync serves WSGI only"):
        CATALOG.resolve("starlette:gunicorn-sync")
    with pytest.raises(UserError, match="own server"):
        CATALOG.resolve("flask:sanic")
    with pytest.raises(UserError, match="unknown framework"):
        CATALOG.resolve("rails:puma")
    with pytest.raises(UserError, match="unknown server"):
        CATALOG.resolve("flask:puma")


def test_default_variant_resolution() -> None:
    assert CATALOG.resolve("starlette:uvicorn").server.event_loop == "uvloop"
    assert CATALOG.resolve("starlette:uvicorn-asyncio").server.http_parser == "h11"
    assert CATALOG.resolve("flask:gunicorn").id == "flask:gunicorn-sync"


def test_worker_defaults_follow_seed_000() -> None:
    sync = CATALOG.resolve("flask:gunicorn-sync")
    greenlet = CATALOG.resolve("flask:gunicorn-gevent")
    coroutine = CATALOG.resolve("starlette:uvicorn")
    assert sync.default_workers(6) == 13 and sync.default_workers(9) == 19
    assert greenlet.concurrency is ConcurrencyType.GREENLET and greenlet.default_workers(6) == 6
    assert coroutine.default_workers(6) == 6


def test_argv_records_the_choices_that_move_results() -> None:
    from pywebbench.catalog.model import LaunchSpec

    spec = LaunchSpec("/venv/bin/python", "app_starlette", "127.0.0.1", 8000, 2, 1)
    argv = CATALOG.resolve("starlette:uvicorn").server.build_argv(spec)
    assert ["--loop", "uvloop", "--http", "httptools"] == argv[argv.index("--loop"):argv.index("--http") + 2]
    assert "--no-access-log" in argv
    plain = CATALOG.resolve("starlette:uvicorn-asyncio").server.build_argv(spec)
    assert "h11" in plain and "asyncio" in plain
