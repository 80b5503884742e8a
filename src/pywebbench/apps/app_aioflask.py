"""aioflask benchmark app: exposes the ASGI callable ``asgi``.

aioflask 0.4.0 runs Flask's request handling in greenlets (greenletio) and needs Flask 2.0/2.1
(it imports ``flask.globals._app_ctx_stack`` and ``flask.helpers.get_env``) with Werkzeug < 3.
Its ASGI entry point only speaks HTTP, so ``asgi`` answers the lifespan protocol itself (put
startup/shutdown work, e.g. a DB pool, there). Add further ``async def`` views beside ``hello``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from aioflask import Flask, Response

Message = MutableMapping[str, Any]

HELLO = "Hello World!"
TEXT_PLAIN = "text/plain; charset=utf-8"

app = Flask(__name__)


@app.get("/hello")
async def hello() -> Response:
    return Response(HELLO, content_type=TEXT_PLAIN)


async def asgi(
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
                await send({"type": "lifespan.shutdown.complete"})
                return
    await app(scope, receive, send)
