"""Falcon copy of the benchmark app (WSGI: ``wsgi``; ASGI: ``asgi`` via falcon.asgi).

Routes from pwb_routes, bodies from pwb_common: the sync backend on the WSGI side, the async
one (asyncpg, aiohttp) on the ASGI side.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import falcon
import falcon.asgi

import pwb_common as pwb
import pwb_routes
import pwb_shapes_wsgi
import pwb_shapes_asgi


class Endpoint:
    def __init__(self, body: Callable[[], bytes], content_type: str) -> None:
        self.body = body
        self.content_type = content_type

    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = self.content_type
        resp.data = self.body()


class AsyncEndpoint:
    def __init__(self, body: Callable[[], Awaitable[bytes]], content_type: str) -> None:
        self.body = body
        self.content_type = content_type

    async def on_get(self, req: falcon.asgi.Request, resp: falcon.asgi.Response) -> None:
        resp.content_type = self.content_type
        resp.data = await self.body()


class CloseBackends:
    """ASGI lifespan: close this worker's asyncpg pool and aiohttp session on shutdown."""

    async def process_shutdown(self, scope: dict[str, Any], event: dict[str, Any]) -> None:
        await pwb.aclose_async()


wsgi = falcon.App()
asgi = falcon.asgi.App(middleware=[CloseBackends()])
for route in pwb_routes.ROUTES:
    wsgi.add_route(route.path, Endpoint(route.body, route.content_type))
    # on_loop honours a sync PWB_DRIVER too
    asgi.add_route(route.path, AsyncEndpoint(route.on_loop(), route.content_type))

wsgi = pwb_shapes_wsgi.wrap(wsgi)
asgi = pwb_shapes_asgi.wrap(asgi)
