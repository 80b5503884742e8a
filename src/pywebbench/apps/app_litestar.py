"""Litestar benchmark app: exposes the ASGI callable ``asgi``. OpenAPI is disabled.

Bodies come from pwb_common as ready bytes, sent as raw ``Response``s (bytes are never
re-encoded). /db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp);
with a sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the
blocking functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from litestar import Litestar, Response, get
from litestar.handlers import HTTPRouteHandler

import pwb_common as pwb

Body = Callable[[], Awaitable[bytes]]


def on_loop(body: Callable[[], bytes]) -> Body:
    """A sync body run on the event loop (blocking it while it runs)."""

    async def run() -> bytes:
        return body()

    return run


ASYNC_DRIVER = pwb.is_async_driver()  # the one switch: False under seed 001's blocking variant


def service(async_body: Body, sync_body: Callable[[], bytes]) -> Body:
    return async_body if ASYNC_DRIVER else on_loop(sync_body)


ENDPOINTS: dict[str, tuple[Body, str]] = {
    "/hello": (on_loop(pwb.hello_body), pwb.TEXT_PLAIN),
    "/db": (service(pwb.db_async, pwb.db), pwb.APPLICATION_JSON),
    "/upstream": (service(pwb.upstream_async, pwb.upstream), pwb.APPLICATION_JSON),
    "/template": (on_loop(pwb.template_body), pwb.TEXT_HTML),
    "/api": (service(pwb.api_async, pwb.api), pwb.APPLICATION_JSON),
    "/posts": (service(pwb.posts_async, pwb.posts), pwb.APPLICATION_JSON),
    "/cpu": (on_loop(pwb.cpu_body), pwb.APPLICATION_JSON),
}


def endpoint(path: str, body: Body, content_type: str) -> HTTPRouteHandler:
    # Litestar appends "; charset=utf-8" to text/* media types itself: pass the bare type.
    media_type = content_type.partition(";")[0]

    async def handler() -> Response[bytes]:
        return Response(await body(), media_type=media_type)

    return get(path, media_type=media_type)(handler)


async def close_backends() -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


HANDLERS = [endpoint(path, body, ctype) for path, (body, ctype) in ENDPOINTS.items()]

asgi = Litestar(route_handlers=HANDLERS, debug=False, openapi_config=None, on_shutdown=[close_backends])
