"""Falcon copy of the benchmark app (WSGI: ``wsgi``; ASGI: ``asgi`` via falcon.asgi).

Bodies come from pwb_common: the sync backend on the WSGI side, the async one (asyncpg,
aiohttp) on the ASGI side.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import falcon
import falcon.asgi

import pwb_common as pwb
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
wsgi.add_route("/hello", Endpoint(pwb.hello_body, pwb.TEXT_PLAIN))
wsgi.add_route("/db", Endpoint(pwb.db, pwb.APPLICATION_JSON))
wsgi.add_route("/upstream", Endpoint(pwb.upstream, pwb.APPLICATION_JSON))
wsgi.add_route("/template", Endpoint(pwb.template_body, pwb.TEXT_HTML))
wsgi.add_route("/api", Endpoint(pwb.api, pwb.APPLICATION_JSON))
wsgi.add_route("/posts", Endpoint(pwb.posts, pwb.APPLICATION_JSON))
wsgi.add_route("/cpu", Endpoint(pwb.cpu_body, pwb.APPLICATION_JSON))

asgi = falcon.asgi.App(middleware=[CloseBackends()])
for route, (body, content_type) in pwb.async_endpoints().items():  # honours a sync PWB_DRIVER too
    asgi.add_route(route, AsyncEndpoint(body, content_type))

wsgi = pwb_shapes_wsgi.wrap(wsgi)
asgi = pwb_shapes_asgi.wrap(asgi)
