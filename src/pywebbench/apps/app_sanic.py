"""Sanic benchmark app: exposes the ASGI callable ``asgi``; also runs on Sanic's own server.

    python app_sanic.py --host H --port P --workers N [--loop uvloop|asyncio]

Sanic's worker manager spawns N worker processes (start method "spawn": each re-imports
this module, so the app must stay at module level). Add further endpoints beside ``hello``.
"""

from __future__ import annotations

import argparse
import os

from sanic import HTTPResponse, Request, Sanic
from sanic.response import text

HELLO = "Hello World!"

app = Sanic("pywebbench")
app.config.MOTD = False  # no startup banner (also under ASGI servers)


@app.get("/hello")
async def hello(request: Request) -> HTTPResponse:
    return text(HELLO)  # text/plain; charset=utf-8


asgi = app


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--loop", choices=["uvloop", "asyncio"], default="uvloop")
    args = parser.parse_args(argv)
    use_uvloop = args.loop == "uvloop"
    # USE_UVLOOP is not passed to spawned workers; they read SANIC_* env vars on import.
    os.environ["SANIC_USE_UVLOOP"] = str(use_uvloop).lower()
    app.config.USE_UVLOOP = use_uvloop
    app.run(
        host=args.host,
        port=args.port,
        workers=args.workers,
        debug=False,
        access_log=False,
        auto_reload=False,
        motd=False,
    )


if __name__ == "__main__":
    main()
