"""Quart benchmark app: exposes the ASGI callable ``asgi``.

Routes come from pwb_routes, bodies from pwb_common as ready bytes, sent as raw ``Response``s
with CONTRACT.md's content types. /db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp);
with a sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the
blocking functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from quart import Quart, Response

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[], Awaitable[Response]]:
    async def get() -> Response:
        return Response(await body(), content_type=content_type)

    return get


app = Quart(__name__)
for route in pwb_routes.ROUTES:
    app.add_url_rule(route.path, endpoint=route.path, view_func=endpoint(route.on_loop(), route.content_type),
                     methods=["GET"])


@app.after_serving
async def close_backends() -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


asgi = pwb_shapes_asgi.wrap(app)
