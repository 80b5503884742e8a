"""Starlette benchmark app: exposes the ASGI callable ``asgi``.

Bodies come from pwb_common as ready bytes, sent as raw ``Response``s with CONTRACT.md's
content types. /db, /api, /posts and /upstream await the async backend (asyncpg, aiohttp);
with a sync PWB_DRIVER (seed 001's "sync DB client inside Starlette", PWB_DRIVER=psycopg)
they call the blocking functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

import pwb_common as pwb

Body = Callable[[], Awaitable[bytes]]


ENDPOINTS = pwb.async_endpoints()


def endpoint(body: Body, content_type: str) -> Callable[[Request], Awaitable[Response]]:
    async def get(request: Request) -> Response:
        return Response(await body(), media_type=content_type)  # charset already in text/* types

    return get


@asynccontextmanager
async def lifespan(app: Starlette) -> AsyncIterator[None]:
    yield
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


ROUTES = [Route(path, endpoint(body, ctype), methods=["GET"]) for path, (body, ctype) in ENDPOINTS.items()]

asgi = Starlette(debug=False, routes=ROUTES, lifespan=lifespan)
