"""FastAPI benchmark app: exposes the ASGI callable ``asgi``.

Handlers return raw ``Response``s with pwb_common's ready bytes (no model validation or
serialisation); OpenAPI/docs routes are disabled. /db, /api, /posts and /upstream await the
async backend (asyncpg, aiohttp); with a sync PWB_DRIVER (seed 001's blocking variant,
PWB_DRIVER=psycopg) they call the blocking functions right on the event loop, on purpose.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI
from fastapi.responses import Response

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


def endpoint(body: Body, content_type: str) -> Callable[[], Awaitable[Response]]:
    async def get() -> Response:
        return Response(await body(), media_type=content_type)  # charset already in text/* types

    return get


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


router = APIRouter()
for path, (body, ctype) in ENDPOINTS.items():
    router.add_api_route(path, endpoint(body, ctype), methods=["GET"], response_class=Response)

asgi = FastAPI(debug=False, openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan)
asgi.include_router(router)
