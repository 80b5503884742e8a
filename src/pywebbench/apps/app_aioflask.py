"""aioflask benchmark app: exposes the ASGI callable ``asgi``.

aioflask 0.4.0 runs Flask's request handling in greenlets (greenletio) and needs Flask 2.0/2.1
(it imports ``flask.globals._app_ctx_stack`` and ``flask.helpers.get_env``) with Werkzeug < 3.
Its ASGI entry point only speaks HTTP, so ``asgi`` answers the lifespan protocol itself.
Routes come from pwb_routes, bodies from pwb_common as ready bytes. /db, /api, /posts and
/upstream await the async backend (asyncpg, aiohttp); with a sync PWB_DRIVER (seed 001's
blocking variant, PWB_DRIVER=psycopg) they call the blocking functions right on the event loop,
on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aioflask import Flask, Response

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Message = MutableMapping[str, Any]

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[], Awaitable[Response]]:
    async def get() -> Response:
        return Response(await body(), content_type=content_type)

    return get


app = Flask(__name__)
for route in pwb_routes.ROUTES:
    app.add_url_rule(route.path, endpoint=route.path, view_func=endpoint(route.on_loop(), route.content_type),
                     methods=["GET"])


async def flask_asgi(
    scope: MutableMapping[str, Any],
    receive: Callable[[], Awaitable[Message]],
    send: Callable[[Message], Awaitable[None]],
) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session
                await send({"type": "lifespan.shutdown.complete"})
                return
    await app(scope, receive, send)


asgi = pwb_shapes_asgi.wrap(flask_asgi)
