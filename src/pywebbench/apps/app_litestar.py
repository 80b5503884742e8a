"""Litestar benchmark app: exposes the ASGI callable ``asgi``. OpenAPI is disabled.

Routes come from pwb_routes, bodies from pwb_common as ready bytes, sent as raw ``Response``s
(bytes are never re-encoded). /db, /api, /posts and /upstream await the async backend (asyncpg,
aiohttp); with a sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the
blocking functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from litestar import Litestar, Response, get
from litestar.handlers import HTTPRouteHandler

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Body = Callable[[], Awaitable[bytes]]


def endpoint(path: str, body: Body, content_type: str) -> HTTPRouteHandler:
    # Litestar appends "; charset=utf-8" to text/* media types itself: pass the bare type.
    media_type = content_type.partition(";")[0]

    async def handler() -> Response[bytes]:
        return Response(await body(), media_type=media_type)

    return get(path, media_type=media_type)(handler)


async def close_backends() -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


HANDLERS = [endpoint(route.path, route.on_loop(), route.content_type) for route in pwb_routes.ROUTES]

asgi = pwb_shapes_asgi.wrap(Litestar(route_handlers=HANDLERS, debug=False, openapi_config=None, on_shutdown=[close_backends]))
