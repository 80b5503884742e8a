"""Starlette benchmark app: exposes the ASGI callable ``asgi``.

Routes come from pwb_routes, bodies from pwb_common as ready bytes, sent as raw ``Response``s
with CONTRACT.md's content types. /db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp).
With a sync PWB_DRIVER (seed 001's "sync DB client inside Starlette", PWB_DRIVER=psycopg)
they are plain ``def`` endpoints, which Starlette runs in its thread pool, as a Starlette
user switching to a sync client writes them; the blocking call never runs on the loop.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[Request], Awaitable[Response]]:
    async def get(request: Request) -> Response:
        return Response(await body(), media_type=content_type)  # charset already in text/* types

    return get


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


def threadpool_endpoint(body: Callable[[], bytes], content_type: str) -> Callable[[Request], Response]:
    def get(request: Request) -> Response:  # sync: Starlette calls it in its thread pool
        return Response(body(), media_type=content_type)

    return get


def starlette_route(route: pwb_routes.Route) -> Route:
    if route.waits_on_service and not pwb.is_async_driver():
        return Route(route.path, threadpool_endpoint(route.body, route.content_type), methods=["GET"])
    return Route(route.path, endpoint(route.on_loop(), route.content_type), methods=["GET"])


ROUTES = [starlette_route(route) for route in pwb_routes.ROUTES]

asgi = pwb_shapes_asgi.wrap(Starlette(debug=False, routes=ROUTES, lifespan=lifespan))
