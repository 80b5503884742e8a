"""Start a WSGI server that has no command line of its own (bjoern, meinheld, waitress,
cheroot, Werkzeug's development server). Runs inside the stack's environment.

    python serve_wsgi.py SERVER MODULE:ATTR --host H --port P --workers N --threads T

Single-process C servers (bjoern, meinheld) are pre-forked into N workers sharing one
listening socket, the way their authors document multi-core use.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import signal
import socket
from typing import Any, Callable


def load(spec: str) -> Any:
    """`module:attr` (dotted attributes allowed); `module:create()` calls a factory, as Gunicorn does."""
    module, _, attr = spec.partition(":")
    factory = attr.endswith("()")
    obj: Any = importlib.import_module(module)
    for part in (attr.removesuffix("()") or "wsgi").split("."):
        obj = getattr(obj, part)
    return obj() if factory else obj


def listening_socket(host: str, port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def prefork(workers: int, serve: Callable[[], None]) -> None:
    """Fork N children running serve(); the parent waits and stops them on SIGTERM."""
    children: list[int] = []
    for _ in range(workers):
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            try:
                serve()
            finally:
                os._exit(0)
        children.append(pid)

    def stop(signum: int, _frame: object) -> None:
        for child in children:
            try:
                os.kill(child, signal.SIGTERM)
            except ProcessLookupError:
                pass

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    for child in children:
        try:
            os.waitpid(child, 0)
        except ChildProcessError:
            pass


def run_bjoern(app: Any, args: argparse.Namespace) -> None:
    import bjoern

    sock = listening_socket(args.host, args.port)
    prefork(args.workers, lambda: bjoern.server_run(sock, app))


def run_meinheld(app: Any, args: argparse.Namespace) -> None:
    from meinheld import server

    server.set_access_logger(None)
    server.set_keepalive(10)  # off unless set, unlike every other server here
    server.set_backlog(2048)  # only takes effect before listen()
    server.listen((args.host, args.port))
    prefork(args.workers, lambda: server.run(app))


def run_waitress(app: Any, args: argparse.Namespace) -> None:
    import waitress

    logging.getLogger("waitress.queue").setLevel(logging.ERROR)  # "Task queue depth" under load
    waitress.serve(app, host=args.host, port=args.port, threads=args.threads, _quiet=True, connection_limit=2048, backlog=2048)


def run_cheroot(app: Any, args: argparse.Namespace) -> None:
    from cheroot import wsgi

    server = wsgi.Server((args.host, args.port), app, numthreads=args.threads, request_queue_size=2048)

    def stop(signum: int, _frame: object) -> None:
        # server.stop() from the handler deadlocks on the serving thread; unwinding does not
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    server.safe_start()


def run_werkzeug(app: Any, args: argparse.Namespace) -> None:
    from werkzeug.serving import run_simple

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no access log
    run_simple(args.host, args.port, app, threaded=True, use_reloader=False, use_debugger=False)


RUNNERS = {
    "bjoern": run_bjoern,
    "meinheld": run_meinheld,
    "waitress": run_waitress,
    "cheroot": run_cheroot,
    "werkzeug": run_werkzeug,
}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("server", choices=sorted(RUNNERS))
    parser.add_argument("app")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    RUNNERS[args.server](load(args.app), args)


if __name__ == "__main__":
    main()
