"""Tornado benchmark app on Tornado's own server.

    python app_tornado.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 starts N forked processes, each binding with SO_REUSEPORT (Tornado's recommended
multi-process mode); the parent forwards SIGTERM/SIGINT to them once. Tornado runs on asyncio,
so ``--loop uvloop`` just swaps the asyncio loop. Bodies come from pwb_common as ready bytes.
/db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp); with a sync
PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the blocking functions
right on the event loop instead, on purpose.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Awaitable, Callable

import tornado.web

import pwb_common as pwb

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


Body = Callable[[], Awaitable[bytes]]


ENDPOINTS = pwb.async_endpoints()


class Endpoint(tornado.web.RequestHandler):
    def initialize(self, body: Body, content_type: str) -> None:
        self._body = body
        self._content_type = content_type

    async def get(self) -> None:
        data = await self._body()
        self.set_header("Content-Type", self._content_type)
        self.finish(data)


ROUTES: list[tuple[str, type[tornado.web.RequestHandler], dict[str, object]]] = [
    (path, Endpoint, {"body": body, "content_type": ctype}) for path, (body, ctype) in ENDPOINTS.items()
]

def make_app() -> tornado.web.Application:
    # log_function silences Tornado's per-request access log.
    return tornado.web.Application(ROUTES, debug=False, log_function=lambda handler: None)


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
    server = make_app().listen(port, address=host, reuse_port=reuse_port, xheaders=False)
    await wait_for_stop_signal()
    server.stop()  # stop accepting; then close open (keep-alive) connections
    await asyncio.wait_for(server.close_all_connections(), timeout=5.0)
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


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
