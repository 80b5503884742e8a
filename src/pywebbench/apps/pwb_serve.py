"""The process model shared by the asyncio apps that run their own server (aiohttp, Tornado).

    python app_X.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 forks N processes that each bind with SO_REUSEPORT; the parent forwards SIGTERM/SIGINT
once, and if any worker exits it stops the rest and exits with the worst code.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)

RunServer = Callable[[str, int, bool], Coroutine[Any, Any, None]]


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


def serve(run_server: RunServer, host: str, port: int, loop: str, reuse_port: bool) -> None:
    for sig in STOP_SIGNALS:  # undo the parent's handlers and mask
        signal.signal(sig, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
    with asyncio.Runner(loop_factory=loop_factory(loop)) as runner:
        runner.run(run_server(host, port, reuse_port))


def main(run_server: RunServer, argv: list[str] | None = None, description: str | None = None) -> None:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="asyncio")
    args = parser.parse_args(argv)
    if args.workers <= 1:
        serve(run_server, args.host, args.port, args.loop, reuse_port=False)
        return
    ctx = multiprocessing.get_context("fork")
    procs = [
        ctx.Process(target=serve, args=(run_server, args.host, args.port, args.loop, True))
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
