"""The `app` command's pieces: the target, its environment variables, server selection, the
deploy command of every server, interface detection (in a real child interpreter) and the
wrk traffic-mix script."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from pywebbench.catalog.deploy import deploy_command
from pywebbench.catalog.model import ConcurrencyType, Interface, Stack
from pywebbench.catalog.servers import SERVERS
from pywebbench.catalog.workloads import Expected, HttpRequest
from pywebbench.core.errors import UserError
from pywebbench.loadgen.wrk import lua_string, mix_lua
from pywebbench.measure.verify import check_answer, Answer
from pywebbench.plan.app import (
    AppTarget, app_framework, app_workload, candidate_servers, parse_env, parse_target, select_servers,
)
from pywebbench.plan.traffic import parse_requests
from pywebbench.results.model import EnvironmentRecord
from pywebbench.stage.appenv import app_requirements, detect_interface
from pywebbench.stage.envs import BuiltEnv

W, A = Interface.WSGI, Interface.ASGI


def _stack(key: str, interface: Interface, *, factory: bool = False, target: str = "mysite.wsgi:application") -> Stack:
    server = next(s for s in SERVERS if s.key == key)
    app = AppTarget(target, Path("/srv/mysite"), factory)
    return Stack(app_framework(app, interface), server)


DEPLOY = {
    "gunicorn-sync": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class sync --log-level warning "
                     "--backlog 2048 --no-control-socket mysite.wsgi:application",
    "gunicorn-gthread": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class gthread --log-level warning "
                        "--backlog 2048 --no-control-socket --threads 4 mysite.wsgi:application",
    "gunicorn-gevent": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class gevent --log-level warning "
                       "--backlog 2048 --no-control-socket --worker-connections 1000 mysite.wsgi:application",
    "gunicorn-eventlet": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class eventlet --log-level warning "
                         "--backlog 2048 --no-control-socket --worker-connections 1000 mysite.wsgi:application",
    "gunicorn-meinheld": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class meinheld.gmeinheld.MeinheldWorker "
                         "--log-level warning --backlog 2048 --no-control-socket mysite.wsgi:application",
    "uwsgi": "uwsgi --http-socket 0.0.0.0:8000 --add-header 'Connection: close' --master --processes 5 "
             "--module mysite.wsgi:application --disable-logging --die-on-term --need-app --lazy-apps "
             "--listen 1024 --pythonpath .",
    "granian-wsgi": "granian --interface wsgi --host 0.0.0.0 --port 8000 --workers 5 --no-access-log --log-level "
                    "warning --backlog 2048 --blocking-threads 4 --no-ws mysite.wsgi:application",
}
DEPLOY_ASGI = {
    "uvicorn": "uvicorn mysite.asgi:application --host 0.0.0.0 --port 8000 --workers 5 --loop uvloop --http "
               "httptools --no-access-log --log-level warning --backlog 2048",
    "uvicorn-asyncio": "uvicorn mysite.asgi:application --host 0.0.0.0 --port 8000 --workers 5 --loop asyncio "
                       "--http h11 --no-access-log --log-level warning --backlog 2048",
    "hypercorn": "hypercorn mysite.asgi:application --bind 0.0.0.0:8000 --workers 5 --worker-class asyncio "
                 "--log-level warning --backlog 2048",
    "hypercorn-uvloop": "hypercorn mysite.asgi:application --bind 0.0.0.0:8000 --workers 5 --worker-class uvloop "
                        "--log-level warning --backlog 2048",
    "granian": "granian --interface asgi --host 0.0.0.0 --port 8000 --workers 5 --no-access-log --log-level warning "
               "--backlog 2048 --loop uvloop mysite.asgi:application",
    "gunicorn-uvicorn": "gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class uvicorn_worker.UvicornWorker "
                        "--log-level warning --backlog 2048 --no-control-socket mysite.asgi:application",
}


@pytest.mark.parametrize("key", sorted(DEPLOY))
def test_the_deploy_command_of_every_wsgi_server(key: str) -> None:
    assert deploy_command(_stack(key, W), workers=5, threads=4) == DEPLOY[key]


@pytest.mark.parametrize("key", sorted(DEPLOY_ASGI))
def test_the_deploy_command_of_every_asgi_server(key: str) -> None:
    stack = _stack(key, A, target="mysite.asgi:application")
    assert deploy_command(stack, workers=5, threads=4) == DEPLOY_ASGI[key]


@pytest.mark.parametrize("key", ["bjoern", "waitress", "cherrypy", "meinheld"])
def test_servers_without_a_cli_deploy_through_the_harness_launcher(key: str) -> None:
    argv = shlex.split(deploy_command(_stack(key, W), workers=3, threads=2))
    assert argv[0] == "python" and argv[1].endswith("serve_wsgi.py")
    assert argv[3] == "mysite.wsgi:application" and argv[argv.index("--port") + 1] == "8000"


def test_every_candidate_server_has_a_tested_deploy_command() -> None:
    wsgi = {s.key for s in candidate_servers(SERVERS, W)}
    asgi = {s.key for s in candidate_servers(SERVERS, A)}
    assert wsgi == set(DEPLOY) | {"bjoern", "waitress", "cherrypy", "meinheld"}
    assert asgi == set(DEPLOY_ASGI)


def test_a_factory_is_called_the_way_each_server_calls_one() -> None:
    gunicorn = deploy_command(_stack("gunicorn-sync", W, factory=True, target="app:create"), 1, 1)
    assert gunicorn.endswith(" 'app:create()'")
    uvicorn = deploy_command(_stack("uvicorn", A, factory=True, target="app:create"), 1, 1)
    assert uvicorn.startswith("uvicorn app:create --factory ")
    granian = deploy_command(_stack("granian", A, factory=True, target="app:create"), 1, 1)
    assert granian.endswith(" --factory app:create")
    with pytest.raises(ValueError):
        deploy_command(_stack("uwsgi", W, factory=True, target="app:create"), 1, 1)


def test_the_built_in_apps_keep_their_own_argv() -> None:
    from pywebbench.catalog.model import LaunchSpec
    gunicorn = next(s for s in SERVERS if s.key == "gunicorn-sync")
    argv = gunicorn.build_argv(LaunchSpec("py", "app_flask", "127.0.0.1", 1, 2, 1))
    assert argv[-1] == "app_flask:wsgi"
    uwsgi = next(s for s in SERVERS if s.key == "uwsgi").build_argv(LaunchSpec("/e/bin/python", "app_flask", "h", 1, 2, 1))
    assert "app_flask:wsgi" in uwsgi and uwsgi[-1].endswith("apps")


def test_an_own_app_gets_its_requirements_only() -> None:
    app = AppTarget("a:b", Path("/x"), requirements=("flask==3.1.3",))
    stack = Stack(app_framework(app, W), next(s for s in SERVERS if s.key == "gunicorn-sync"))
    assert "flask==3.1.3" in stack.requirements
    assert not any(r.startswith(("psycopg", "jinja2", "asyncpg")) for r in stack.requirements)


@pytest.mark.parametrize("text", ["app", "app:", ":app", "my-app:app", "app:app()", "a b:c"])
def test_a_malformed_target_is_refused(text: str) -> None:
    with pytest.raises(UserError, match="MODULE:CALLABLE"):
        parse_target(text)


def test_env_file_then_flags(tmp_path: Path) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text("# a comment\n\nexport SECRET_KEY='s3'\nDEBUG=0\n")
    assert parse_env(["DEBUG=1", "EMPTY="], env_file) == (("SECRET_KEY", "s3"), ("DEBUG", "0"), ("DEBUG", "1"),
                                                          ("EMPTY", ""))
    for bad in ("NOEQUALS", "1X=2", "PYTHONPATH=/x"):
        with pytest.raises(UserError):
            parse_env([bad], None)


def test_servers_default_to_every_one_of_the_interface_without_greenlets() -> None:
    chosen, skipped = select_servers(SERVERS, [], W, allow_monkeypatch=False, factory=False)
    keys = {s.key for s in chosen}
    assert {"gunicorn-sync", "gunicorn-gthread", "uwsgi", "waitress", "bjoern", "granian-wsgi", "cherrypy"} <= keys
    assert not any(s.concurrency is ConcurrencyType.GREENLET for s in chosen)
    assert {"gunicorn-gevent", "gunicorn-eventlet", "meinheld"} <= {k for k, _ in skipped}
    chosen, _ = select_servers(SERVERS, [], W, allow_monkeypatch=True, factory=False)
    assert "gunicorn-gevent" in {s.key for s in chosen}
    asgi, _ = select_servers(SERVERS, [], A, allow_monkeypatch=False, factory=False)
    assert {s.key for s in asgi} == set(DEPLOY_ASGI)


def test_server_names_globs_and_refusals() -> None:
    chosen, skipped = select_servers(SERVERS, ["gunicorn-*", "granian"], W, allow_monkeypatch=False, factory=False)
    assert [s.key for s in chosen] == ["gunicorn-sync", "gunicorn-gthread", "granian-wsgi"]
    assert "gunicorn-gevent" in dict(skipped)
    with pytest.raises(UserError, match="unknown server"):
        select_servers(SERVERS, ["nginx-unit"], W, allow_monkeypatch=False, factory=False)
    with pytest.raises(UserError, match="serves ASGI"):
        select_servers(SERVERS, ["uvicorn"], W, allow_monkeypatch=False, factory=False)
    with pytest.raises(UserError, match="allow-monkeypatch"):
        select_servers(SERVERS, ["gunicorn-gevent"], W, allow_monkeypatch=False, factory=False)
    with pytest.raises(UserError, match="factory"):
        select_servers(SERVERS, ["uwsgi"], W, allow_monkeypatch=False, factory=True)
    with pytest.raises(UserError, match="aiohttp only"):
        select_servers(SERVERS, ["aiohttp"], A, allow_monkeypatch=False, factory=False)


def test_the_app_workload_checks_status_and_body() -> None:
    workload = app_workload(parse_requests(["GET /items"]), 201, "alpha", with_postgres=True)
    assert workload.requests == (HttpRequest("GET", "/items"),) and workload.needs
    assert check_answer(workload, Answer(201, "application/json", b'["alpha"]', False), Expected()) is None
    assert "status 200, expected 201" in (check_answer(workload, Answer(200, "", b"alpha", False), Expected()) or "")
    assert "does not contain 'alpha'" in (check_answer(workload, Answer(201, "", b"beta", False), Expected()) or "")


def test_the_mix_script_holds_every_request_its_weight_in_the_pool() -> None:
    lua = mix_lua((HttpRequest("GET", "/a"), HttpRequest("POST", "/b", b'{"q": "\\"}\n', (("X-K", "v"),), 3)))
    assert '{"GET", "/a", {}, nil, 1},' in lua
    assert '{"POST", "/b", {["X-K"] = "v"}, "{\\034q\\034: \\034\\092\\034}\\010", 3},' in lua
    assert "request = function()" in lua and "wrk.format" in lua
    assert lua_string(b"\xff") == '"\\255"'


def test_requirements_from_a_file_or_the_pyproject(tmp_path: Path) -> None:
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("# pinned\nflask==3.1.3  # web\n\nsqlalchemy>=2\n")
    assert app_requirements(reqs, tmp_path) == ("flask==3.1.3", "sqlalchemy>=2")
    reqs.write_text("-r other.txt\n")
    with pytest.raises(UserError, match="option line"):
        app_requirements(reqs, tmp_path)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "x"\ndependencies = ["fastapi==0.163.2"]\n')
    assert app_requirements(None, tmp_path) == ("fastapi==0.163.2",)
    assert app_requirements(None, tmp_path / "missing") == ()


APPS = '''
import asyncio

def wsgi_function(environ, start_response):
    return [b""]

async def asgi_function(scope, receive, send):
    pass

class AsgiClass:
    async def __call__(self, scope, receive, send):
        pass

class WsgiHandler:  # what django.core.wsgi.get_wsgi_application() returns
    def __call__(self, environ, start_response):
        return [b""]

class AsgiHandler:  # django.core.asgi.get_asgi_application()
    async def __call__(self, scope, receive, send):
        pass

asgi_object = AsgiClass()
django_wsgi = WsgiHandler()
django_asgi = AsgiHandler()

def create():
    return AsgiClass()

def one_argument(request):
    pass

not_callable = 42

class Nested:
    app = staticmethod(wsgi_function)
'''


@pytest.fixture
def app_dir(tmp_path: Path) -> Path:
    (tmp_path / "myapp.py").write_text(APPS)
    (tmp_path / "broken.py").write_text("import os\nraise RuntimeError('settings missing: ' + os.environ['WHO'])\n")
    return tmp_path


def _env() -> BuiltEnv:
    """The harness's own interpreter as the 'built' environment: detection runs in a child of it."""
    prefix = Path(sys.executable).parent.parent
    return BuiltEnv(prefix, EnvironmentRecord("h", "py", (), (), (), 0.0), reused=True)


@pytest.mark.parametrize(("target", "factory", "interface"), [
    ("myapp:wsgi_function", False, W),
    ("myapp:asgi_function", False, A),
    ("myapp:asgi_object", False, A),
    ("myapp:django_wsgi", False, W),
    ("myapp:django_asgi", False, A),
    ("myapp:create", True, A),
    ("myapp:Nested.app", False, W),
])
def test_the_interface_is_detected_by_importing_the_app(app_dir: Path, target: str, factory: bool,
                                                        interface: Interface) -> None:
    assert detect_interface(_env(), target, factory, app_dir, {"PYTHONPATH": str(app_dir)}) is interface


@pytest.mark.parametrize(("target", "says"), [
    ("myapp:one_argument", "is neither a WSGI callable"),
    ("myapp:not_callable", "is neither a WSGI callable"),
    ("myapp:missing", "does not import: AttributeError"),
    ("nosuchmodule:app", "does not import: ModuleNotFoundError: No module named 'nosuchmodule'"),
    ("broken:app", "does not import: RuntimeError: settings missing: tester"),
])
def test_an_app_that_does_not_import_or_is_neither_is_one_line(app_dir: Path, target: str, says: str) -> None:
    with pytest.raises(UserError, match=says) as caught:
        detect_interface(_env(), target, False, app_dir, {"PYTHONPATH": str(app_dir), "WHO": "tester"})
    assert "\n" not in str(caught.value)


def test_a_server_whose_body_differs_from_the_majority_is_named() -> None:
    from pywebbench.measure.answers import Reply, odd_answers
    same = {"a": {"app GET /": Reply(b"x")}, "b": {"app GET /": Reply(b"x")}}
    assert odd_answers(same) == []
    lines = [o.line for o in odd_answers({**same, "c": {"app GET /": Reply(b"yy")}})]
    assert lines == ["c answers app GET / differently from a, b: byte 0: 'yy' != 'x' (2 and 1 bytes)"]


def test_a_forced_interface_still_needs_the_app_to_import(app_dir: Path) -> None:
    env = {"PYTHONPATH": str(app_dir), "WHO": "x"}
    assert detect_interface(_env(), "myapp:one_argument", False, app_dir, env, forced=A) is A
    with pytest.raises(UserError, match="does not import"):
        detect_interface(_env(), "broken:app", False, app_dir, env, forced=W)


@pytest.mark.parametrize(("extra", "says"), [
    (["--slo", "p99<100ms"], "--slo is the objective of a tuning run: add --tune"),
    (["--tune", "--slo", "p99 under 100ms"], "--slo"),
    (["--tune", "--workers", "2"], "--tune searches workers and threads itself"),
    (["--tune", "--rate", "100"], "--rate with --tune is the first rate of a capacity search: it needs --slo"),
    (["--rate", "100,200"], "app takes one --rate, got 2"),
])
def test_tune_flags_are_refused_in_one_line_before_any_environment_is_built(
        extra: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    from pywebbench.cli import main
    assert main(["app", "--app", "mysite.wsgi:application", *extra]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and says in err and "building its environment" not in err


@pytest.mark.parametrize("mix", [[], ["--request", "POST /b"], [f"--request={r}" for r in ("GET /a weight=3", "GET /b")],
                                 [f"--request={r}" for r in ("GET /a", "POST /b")],
                                 [f"--request={r}" for r in ("GET /a", "GET /b x-k:1")], ["--requests-file", "FILE"]])
def test_every_mix_under_an_slo_is_probed_by_oha(mix: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from pywebbench.commands import app as ownapp
    from pywebbench.jobs import tune
    from pywebbench.commands.arguments import build_parser
    requests = tmp_path / "requests.txt"
    requests.write_text("GET /a weight=3\nPOST /b\n")
    monkeypatch.setattr(tune, "locate", lambda name: f"/bin/{name}")
    checked: list[str] = []
    monkeypatch.setattr(ownapp, "check_tune", lambda options, slo, **kw: checked.append(options.generator))
    args = build_parser().parse_args(["app", "--app", "a:b", "--tune", "--slo", "p99<100ms",
                                      *[str(requests) if word == "FILE" else word for word in mix]])
    assert ownapp._check_tune_flags(args) is not None and checked == ["oha"]


def test_env_values_are_hidden_in_the_recorded_command() -> None:
    from pywebbench.commands.app import redact_env_values
    argv = ("pywebbench", "app", "--env", "SECRET=x=y", "--env=TOKEN=abc", "--app", "a:b")
    assert redact_env_values(argv) == ("pywebbench", "app", "--env", "SECRET=***", "--env=TOKEN=***", "--app", "a:b")
