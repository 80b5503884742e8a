"""Sanic benchmark app: exposes the ASGI callable ``asgi``; also runs on Sanic's own server.

    python app_sanic.py --host H --port P --workers N [--loop uvloop|asyncio]

Sanic's worker manager spawns N worker processes (start method "spawn": each re-imports
this module, so the app must stay at module level). Routes come from pwb_routes, bodies from
pwb_common as ready bytes. /db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp); with a
sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the blocking
functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from sanic import HTTPResponse, Request, Sanic

import pwb_common as pwb
import pwb_routes
import pwb_shapes_sanic

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[Request], Coroutine[Any, Any, HTTPResponse]]:
    async def get(request: Request) -> HTTPResponse:
        data = await body()
        # Sanic's ASGI side sends no Content-Length of its own (the server would chunk);
        # its own server sets the same value itself.
        return HTTPResponse(data, headers={"content-length": str(len(data))}, content_type=content_type)

    return get


async def close_backends(application: Sanic[Any, Any]) -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


app = Sanic("pywebbench")
app.config.MOTD = False  # no startup banner (also under ASGI servers)
for route in pwb_routes.ROUTES:
    app.add_route(endpoint(route.on_loop(), route.content_type), route.path, methods=["GET"], name=route.name)
app.register_listener(close_backends, "after_server_stop")
pwb_shapes_sanic.add_routes(app)

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
