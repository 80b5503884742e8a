"""The servers, one adapter per server and worker model: packages and the command line.

Each argv builder turns a LaunchSpec (interpreter, app module, address, worker and thread
counts) into the exact command the harness runs and records. Access logs are off and
log levels at warning everywhere, as a production deployment runs.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.catalog.model import ConcurrencyType, Interface, LaunchSpec, ServerVariant, Stack
from pywebbench.catalog.protocols import EVERY_PROTOCOL, Protocol
from pywebbench.results.server import AUTO_WORKERS

SYNC, GREENLET, COROUTINE = ConcurrencyType.SYNC, ConcurrencyType.GREENLET, ConcurrencyType.COROUTINE
W, A, O = Interface.WSGI, Interface.ASGI, Interface.OWN

MEINHELD = "meinheld==1.0.2+greenlet3"
"""meinheld rebuilt against greenlet 3's header by the harness (stage/patched.py builds the wheel)."""

APPS_DIR = Path(__file__).resolve().parent.parent / "apps"


GUNICORN = "gunicorn==27.0.1"
# Gunicorn removed its eventlet worker in 26.0; 25.3.0 is the last release that has it.
GUNICORN_WITH_EVENTLET = "gunicorn==25.3.0"
UVICORN_FAST = ("uvicorn==0.38.0", "uvloop==0.22.1", "httptools==0.7.1")
UVICORN_PLAIN = ("uvicorn==0.38.0", "h11==0.16.0")


def _attr(interface: Interface) -> str:
    return "asgi" if interface is Interface.ASGI else "wsgi"


def _app(spec: LaunchSpec, attr: str) -> str:
    """The app a server imports: the built-in module's `attr`, or a person's own target.

    A factory is written `module:create()`, the form Gunicorn, Hypercorn and the harness's
    launcher call (Uvicorn and Granian take `--factory` instead: see `_factory_flag`).
    """
    if spec.target is None:
        return f"{spec.module}:{attr}"
    return f"{spec.target}()" if spec.factory else spec.target


def _workers(spec: LaunchSpec, flag: str = "--workers") -> list[str]:
    """The worker count's flag; none for workers=auto, so the server sizes itself as deployed."""
    return [] if spec.workers == AUTO_WORKERS else [flag, str(spec.workers)]


def _factory_flag(spec: LaunchSpec) -> list[str]:
    return ["--factory"] if spec.target is not None and spec.factory else []


def _tls(spec: LaunchSpec, certificate: str, key: str) -> list[str]:
    """The server's own flags for the run's certificate and key; none in the clear."""
    return [] if spec.tls is None else [certificate, spec.tls.certificate, key, spec.tls.key]


H1_TLS = frozenset({Protocol.H1, Protocol.H1_TLS})
"""HTTP/1.1 servers that terminate TLS themselves (no HTTP/2 in them)."""
HYPERCORN_PROTOCOLS = frozenset({Protocol.H1, Protocol.H2C, Protocol.H2_TLS})
"""Hypercorn serves h1 over TLS too, but h11 writes its status line without a reason phrase
("HTTP/1.1 200 ") and h2load, the generator of the TLS protocols, counts every such answer as
failed (seen here with nghttp2 1.52): h1-tls on Hypercorn would read as all errors."""


def gunicorn(
    worker_class: str, interface: Interface, *extra: str, target: str | None = None
) -> Callable[[LaunchSpec], list[str]]:
    def build(spec: LaunchSpec) -> list[str]:
        return [
            spec.python, "-m", "gunicorn",
            "--bind", f"{spec.host}:{spec.port}",
            *_workers(spec),
            "--worker-class", worker_class,
            "--log-level", "warning",
            "--backlog", "2048",
            # since 25.1 every instance would otherwise share ~/.gunicorn/gunicorn.ctl
            "--no-control-socket",
            *_tls(spec, "--certfile", "--keyfile"),
            *[arg.format(threads=spec.threads) for arg in extra],
            _app(spec, target or _attr(interface)),
        ]

    return build


def uvicorn(loop: str, http: str) -> Callable[[LaunchSpec], list[str]]:
    def build(spec: LaunchSpec) -> list[str]:
        return [
            spec.python, "-m", "uvicorn", spec.target or f"{spec.module}:asgi", *_factory_flag(spec),
            "--host", spec.host, "--port", str(spec.port),
            *_workers(spec),
            "--loop", loop, "--http", http,
            "--no-access-log", "--log-level", "warning", "--backlog", "2048",
            *_tls(spec, "--ssl-certfile", "--ssl-keyfile"),
        ]

    return build


def hypercorn(worker_class: str) -> Callable[[LaunchSpec], list[str]]:
    def build(spec: LaunchSpec) -> list[str]:
        return [
            spec.python, "-m", "hypercorn", _app(spec, "asgi"),
            "--bind", f"{spec.host}:{spec.port}",
            *_workers(spec),
            "--worker-class", worker_class,
            "--log-level", "warning", "--backlog", "2048",
            *_tls(spec, "--certfile", "--keyfile"),
        ]

    return build


def granian(interface: Interface) -> Callable[[LaunchSpec], list[str]]:
    def build(spec: LaunchSpec) -> list[str]:
        argv = [
            spec.python, "-m", "granian",
            "--interface", interface.value.lower(),
            "--host", spec.host, "--port", str(spec.port),
            *_workers(spec),
            "--no-access-log", "--log-level", "warning", "--backlog", "2048",
            # --http auto (its default) answers h1 and h2c by prior knowledge on one port, and
            # offers both by ALPN over TLS.
            *_tls(spec, "--ssl-certificate", "--ssl-keyfile"),
        ]
        if interface is Interface.WSGI:
            argv += ["--blocking-threads", str(spec.threads), "--no-ws"]
        else:
            argv += ["--loop", "uvloop"]
        return [*argv, *_factory_flag(spec), spec.target or f"{spec.module}:{_attr(interface)}"]

    return build


def uwsgi(spec: LaunchSpec) -> list[str]:
    # --http-socket has the workers parse HTTP themselves (no router process), but it answers
    # HTTP/1.1 and then closes: without an explicit "Connection: close" wrk counts a read
    # error per request (the "uwsgi errors" column of seed 003). --die-on-term: uWSGI 2.0
    # otherwise treats SIGTERM as "reload". A person's own app is found from the directory
    # it is started in (the app dir), as a deployment would.
    if spec.target is not None and spec.factory:
        raise ValueError("uWSGI cannot call an app factory: it imports a callable")
    return [
        str(Path(spec.python).parent / "uwsgi"),
        "--http-socket", f"{spec.host}:{spec.port}",
        "--add-header", "Connection: close",
        "--master", *_workers(spec, "--processes"),
        "--module", spec.target or f"{spec.module}:wsgi",
        "--disable-logging", "--die-on-term", "--need-app", "--lazy-apps",
        "--listen", "1024", "--pythonpath", "." if spec.target is not None else str(APPS_DIR),
    ]


def launcher(server: str) -> Callable[[LaunchSpec], list[str]]:
    """Servers with no CLI of their own start through apps/serve_wsgi.py."""

    def build(spec: LaunchSpec) -> list[str]:
        return [
            spec.python, str(APPS_DIR / "serve_wsgi.py"), server, _app(spec, "wsgi"),
            "--host", spec.host, "--port", str(spec.port),
            *_workers(spec), "--threads", str(spec.threads),
        ]

    return build


def own_server(spec: LaunchSpec) -> list[str]:
    # --loop always explicit: left out, aiohttp and Tornado would run plain asyncio and
    # Sanic uvloop; seed 000 ran every asyncio test on uvloop.
    return [
        spec.python, str(APPS_DIR / f"{spec.module}.py"),
        "--host", spec.host, "--port", str(spec.port), *_workers(spec), "--loop", "uvloop",
    ]


def go_reference(spec: LaunchSpec) -> list[str]:
    """spec.python carries the built binary's path for native stacks."""
    return [spec.python, "-host", spec.host, "-port", str(spec.port)]


def _no_argv(spec: LaunchSpec) -> list[str]:
    raise RuntimeError("nginx is started by NginxService, not from an argv")


SERVERS: tuple[ServerVariant, ...] = (
    # Gunicorn and its worker models
    ServerVariant("gunicorn", "sync", "Gunicorn", "sync", W, SYNC, (GUNICORN,), gunicorn("sync", W),
                  # h1 only: it closes the connection after every answer, and h2load (the generator
                  # of h1-tls) does not open another; its window hung until the generator's timeout.
                  notes="closes the connection after every response"),
    ServerVariant("gunicorn", "gthread", "Gunicorn", "gthread", W, SYNC, (GUNICORN,),
                  gunicorn("gthread", W, "--threads", "{threads}"), threaded=True, protocols=H1_TLS),
    ServerVariant("gunicorn", "gevent", "Gunicorn", "gevent", W, GREENLET, ("gunicorn[gevent]==27.0.1", "gevent==26.9.0"),
                  gunicorn("gevent", W, "--worker-connections", "1000"), event_loop="gevent (libev)",
                  driver="psycopg2-gevent"),
    ServerVariant("gunicorn", "eventlet", "Gunicorn", "eventlet", W, GREENLET, (GUNICORN_WITH_EVENTLET, "eventlet==0.41.3"),
                  gunicorn("eventlet", W, "--worker-connections", "1000"), event_loop="eventlet (epoll hub)",
                  driver="psycopg2-eventlet"),
    ServerVariant("gunicorn", "meinheld", "Gunicorn", "meinheld.gmeinheld.MeinheldWorker", W, GREENLET,
                  (GUNICORN, MEINHELD), gunicorn("meinheld.gmeinheld.MeinheldWorker", W),
                  event_loop="meinheld (picoev)", http_parser="picohttpparser",
                  overrides=("greenlet==3.5.6",), driver="psycopg2-meinheld"),
    ServerVariant("gunicorn", "uvicorn", "Gunicorn", "uvicorn_worker.UvicornWorker", A, COROUTINE,
                  (GUNICORN, "uvicorn-worker==0.4.0", *UVICORN_FAST),
                  gunicorn("uvicorn_worker.UvicornWorker", A), event_loop="uvloop", http_parser="httptools"),
    # Other WSGI servers
    ServerVariant("uwsgi", "", "uWSGI", "prefork", W, SYNC, ("uwsgi==2.0.31",), uwsgi, http_parser="uwsgi (C)"),
    ServerVariant("meinheld", "", "Meinheld", "meinheld", W, GREENLET, (MEINHELD,), launcher("meinheld"),
                  event_loop="meinheld (picoev)", http_parser="picohttpparser", overrides=("greenlet==3.5.6",),
                  driver="psycopg2-meinheld"),
    ServerVariant("bjoern", "", "bjoern", "bjoern", W, SYNC, ("bjoern==3.2.2",), launcher("bjoern"),
                  event_loop="libev", http_parser="http-parser (C)"),
    ServerVariant("waitress", "", "Waitress", "threads", W, SYNC, ("waitress==3.0.2",), launcher("waitress"),
                  threaded=True, single_process=True, event_loop="asyncore-style"),
    ServerVariant("cherrypy", "", "CherryPy (Cheroot)", "threads", W, SYNC, ("cheroot==11.1.2",), launcher("cheroot"),
                  threaded=True, single_process=True),
    ServerVariant("flask-dev", "", "Flask dev server", "threads", W, SYNC, (), launcher("werkzeug"),
                  threaded=True, single_process=True, only_frameworks=frozenset({"flask"}),
                  notes="Werkzeug's development server, threaded, debug off"),
    ServerVariant("granian", "wsgi", "Granian", "granian-wsgi", W, SYNC, ("granian==2.8.7",), granian(W),
                  threaded=True, event_loop="tokio", http_parser="hyper (Rust)", protocols=EVERY_PROTOCOL),
    # ASGI servers
    ServerVariant("uvicorn", "", "Uvicorn", "uvicorn", A, COROUTINE, UVICORN_FAST, uvicorn("uvloop", "httptools"),
                  event_loop="uvloop", http_parser="httptools", protocols=H1_TLS),
    ServerVariant("uvicorn", "asyncio", "Uvicorn", "uvicorn", A, COROUTINE, UVICORN_PLAIN, uvicorn("asyncio", "h11"),
                  event_loop="asyncio", http_parser="h11",
                  notes="with --workers > 1 uvicorn leaves TCP_NODELAY off under h11 (about 43 ms per "
                        "keep-alive request, uvicorn issue 3149): compare at one worker", protocols=H1_TLS),
    ServerVariant("hypercorn", "", "Hypercorn", "asyncio", A, COROUTINE, ("hypercorn==0.18.0",), hypercorn("asyncio"),
                  event_loop="asyncio", http_parser="h11", protocols=HYPERCORN_PROTOCOLS),
    ServerVariant("hypercorn", "uvloop", "Hypercorn", "uvloop", A, COROUTINE, ("hypercorn==0.18.0", "uvloop==0.22.1"),
                  hypercorn("uvloop"), event_loop="uvloop", http_parser="h11", protocols=HYPERCORN_PROTOCOLS),
    ServerVariant("granian", "", "Granian", "granian-asgi", A, COROUTINE, ("granian==2.8.7", "uvloop==0.22.1"),
                  granian(A), event_loop="uvloop", http_parser="hyper (Rust)", protocols=EVERY_PROTOCOL),
    # Frameworks' own servers
    ServerVariant("sanic", "", "Sanic", "sanic", O, COROUTINE, (), own_server, own_framework="sanic",
                  event_loop="uvloop", http_parser="httptools"),
    ServerVariant("aiohttp", "", "aiohttp", "aiohttp", O, COROUTINE, ("uvloop==0.22.1",), own_server,
                  own_framework="aiohttp", event_loop="uvloop", http_parser="aiohttp (C)"),
    ServerVariant("gunicorn", "aiohttp", "Gunicorn", "aiohttp.GunicornUVLoopWebWorker", O, COROUTINE,
                  (GUNICORN, "uvloop==0.22.1"),
                  gunicorn("aiohttp.GunicornUVLoopWebWorker", O, target="app"),
                  only_frameworks=frozenset({"aiohttp"}), event_loop="uvloop", http_parser="aiohttp (C)",
                  notes="seed 002 ran aiohttp this way"),
    ServerVariant("tornado", "", "Tornado", "tornado", O, COROUTINE, ("uvloop==0.22.1",), own_server,
                  own_framework="tornado", event_loop="uvloop", http_parser="tornado (Python)"),
    # References: what the machine does without Python (seed 001's Go server, seed 004's nginx)
    ServerVariant("net-http", "", "Go net/http", "goroutines", O, ConcurrencyType.REFERENCE, (), go_reference,
                  own_framework="go", native="go-reference", event_loop="Go runtime", http_parser="net/http"),
    ServerVariant("static", "", "nginx", "event workers", O, ConcurrencyType.REFERENCE, (), _no_argv,
                  own_framework="nginx", native="nginx", event_loop="epoll", http_parser="nginx",
                  workloads=frozenset({"static"})),
)


# Pairings that exist on paper but cannot run here, each with the reason found when tried.
STACK_EXCEPTIONS: dict[str, Callable[[Stack], Stack]] = {}
