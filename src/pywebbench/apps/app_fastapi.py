"""FastAPI benchmark app: exposes the ASGI callable ``asgi``.

Routes come from pwb_routes; handlers return raw ``Response``s with pwb_common's ready bytes (no
model validation or serialisation); OpenAPI/docs routes are disabled. /db, /api, /posts and
/upstream await the async backend (asyncpg, aiohttp); with a sync PWB_DRIVER (seed 001's
blocking variant, PWB_DRIVER=psycopg) they call the blocking functions right on the event loop,
on purpose.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from fastapi import APIRouter, FastAPI
from fastapi.responses import Response

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[], Awaitable[Response]]:
    async def get() -> Response:
        return Response(await body(), media_type=content_type)  # charset already in text/* types

    return get


@asynccontextmanager
async def lifespan(app: FastAPI) -> AsyncIterator[None]:
    yield
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


router = APIRouter()
for route in pwb_routes.ROUTES:
    router.add_api_route(route.path, endpoint(route.on_loop(), route.content_type), methods=["GET"],
                         response_class=Response)

asgi = FastAPI(debug=False, openapi_url=None, docs_url=None, redoc_url=None, lifespan=lifespan)
asgi.include_router(router)
asgi = pwb_shapes_asgi.wrap(asgi)
