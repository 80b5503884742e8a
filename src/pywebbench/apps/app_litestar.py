"""Litestar benchmark app: exposes the ASGI callable ``asgi``.

Add further endpoints as route handlers listed in ``HANDLERS``. OpenAPI is disabled.
"""

from litestar import Litestar, MediaType, get

HELLO = "Hello World!"


@get("/hello", media_type=MediaType.TEXT)  # Litestar appends "; charset=utf-8"
async def hello() -> str:
    return HELLO


HANDLERS = [hello]

asgi = Litestar(route_handlers=HANDLERS, debug=False, openapi_config=None)
