"""aiohttp benchmark app on aiohttp's own server.

    python app_aiohttp.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 starts N forked processes, each binding with SO_REUSEPORT; the parent forwards
SIGTERM/SIGINT to them once. For gunicorn use ``app_aiohttp:app`` (a ``web.Application``)
with ``--worker-class aiohttp.GunicornUVLoopWebWorker`` (or ``aiohttp.GunicornWebWorker``).
Bodies come from pwb_common as ready bytes. /db, /api, /posts and /upstream await the async
backend (asyncpg, aiohttp); with a sync PWB_DRIVER (seed 001's blocking variant,
PWB_DRIVER=psycopg) they call the blocking functions right on the event loop, on purpose.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Awaitable, Callable

from aiohttp import web

import pwb_common as pwb

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


Body = Callable[[], Awaitable[bytes]]


ENDPOINTS = pwb.async_endpoints()


def endpoint(body: Body, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def get(request: web.Request) -> web.Response:
        return web.Response(body=await body(), headers={"Content-Type": content_type})

    return get


ROUTES = [web.get(path, endpoint(body, ctype)) for path, (body, ctype) in ENDPOINTS.items()]


async def close_backends(application: web.Application) -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


def make_app() -> web.Application:
    application = web.Application()
    application.add_routes(ROUTES)
    application.on_cleanup.append(close_backends)
    return application


app = make_app()  # target for gunicorn's aiohttp workers


def loop_factory(kind: str) -> Callable[[], asyncio.AbstractEventLoop]:
    if kind == "uvloop":
        import uvloop

        return uvloop.new_event_loop
    return asyncio.new_event_loop


async def wait_for_stop_signal() -> None:
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    for sig in STOP_SIGNALS:
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    for sig in STOP_SIGNALS:  # graceful shutdown has begun: ignore repeated signals
        loop.remove_signal_handler(sig)
        signal.signal(sig, signal.SIG_IGN)


async def run_server(host: str, port: int, reuse_port: bool) -> None:
    runner = web.AppRunner(
        make_app(), access_log=None, keepalive_timeout=75.0, shutdown_timeout=5.0
    )  # keep-alive as web.run_app's default; AppRunner's own is 3630 s
    await runner.setup()
    await web.TCPSite(runner, host, port, reuse_port=reuse_port).start()
    await wait_for_stop_signal()
    await runner.cleanup()


def serve(host: str, port: int, loop: str, reuse_port: bool) -> None:
    for sig in STOP_SIGNALS:  # undo the parent's handlers and mask
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        runner.run(run_server(host, port, reuse_port))


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
    stopping = False

    def stop(signum: int, frame: object) -> None:
        nonlocal stopping
        if not stopping:
            stopping = True
            for proc in procs:
                if proc.is_alive():
                    proc.terminate()  # SIGTERM: graceful shutdown in the worker

    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)  # no signal until all are set up
    for proc in procs:
        proc.start()
    for sig in STOP_SIGNALS:
        signal.signal(sig, stop)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    # If any worker exits (crash, bind error, signal), stop the rest and exit.
    multiprocessing.connection.wait([proc.sentinel for proc in procs])
    stop(signal.SIGTERM, None)
    for proc in procs:
        proc.join()
    sys.exit(max(abs(proc.exitcode or 0) for proc in procs))


if __name__ == "__main__":
    main()
