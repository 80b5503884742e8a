"""aiohttp benchmark app on aiohttp's own server.

    python app_aiohttp.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 starts N forked processes, each binding with SO_REUSEPORT; the parent forwards
SIGTERM/SIGINT to them. For gunicorn use ``app_aiohttp:app`` (a ``web.Application``) with
``--worker-class aiohttp.GunicornUVLoopWebWorker`` (or ``aiohttp.GunicornWebWorker``).
Add further endpoints to ``ROUTES``; per-process resources (DB pool, client session)
belong in ``app.cleanup_ctx``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import sys

from aiohttp import web

HELLO = "Hello World!"
STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}


async def hello(request: web.Request) -> web.Response:
    return web.Response(text=HELLO, content_type="text/plain", charset="utf-8")


ROUTES = [
    web.get("/hello", hello),
]


def make_app() -> web.Application:
    application = web.Application()
    application.add_routes(ROUTES)
    return application


app = make_app()


def new_loop(kind: str) -> asyncio.AbstractEventLoop:
    if kind == "uvloop":
        import uvloop

        return uvloop.new_event_loop()
    return asyncio.new_event_loop()


def serve(host: str, port: int, loop: str, reuse_port: bool) -> None:
    # Undo the parent's handlers and mask; run_app installs its own SIGTERM/SIGINT handlers.
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    web.run_app(
        make_app(),
        host=host,
        port=port,
        access_log=None,
        print=None,
        reuse_port=reuse_port,
        shutdown_timeout=5.0,
        loop=new_loop(loop),
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="asyncio")
    args = parser.parse_args(argv)
    if args.workers <= 1:
        serve(args.host, args.port, args.loop, reuse_port=False)
        return
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=serve, args=(args.host, args.port, args.loop, True))
        for _ in range(args.workers)
    ]

    def stop(signum: int, frame: object) -> None:
        for proc in procs:
            if proc.is_alive():
                proc.terminate()  # SIGTERM: graceful shutdown inside run_app

    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # no signal until all are set up
    for proc in procs:
        proc.start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    # If any worker exits (crash, bind error, signal), stop the rest and exit.
    multiprocessing.connection.wait([proc.sentinel for proc in procs])
    stop(signal.SIGTERM, None)
    for proc in procs:
        proc.join()
    sys.exit(max(abs(proc.exitcode or 0) for proc in procs))


if __name__ == "__main__":
    main()
