"""Falcon copy of the benchmark app (WSGI: ``wsgi``; ASGI: ``asgi`` via falcon.asgi)."""

from __future__ import annotations

import falcon
import falcon.asgi

TEXT_PLAIN = "text/plain; charset=utf-8"


class Hello:
    def on_get(self, req: falcon.Request, resp: falcon.Response) -> None:
        resp.content_type = TEXT_PLAIN
        resp.text = "Hello World!"


class AsyncHello:
    async def on_get(
        self, req: falcon.asgi.Request, resp: falcon.asgi.Response
    ) -> None:
        resp.content_type = TEXT_PLAIN
        resp.text = "Hello World!"


# Further endpoints (DB query, upstream call, template): add a resource pair and route it
# in both apps below.

wsgi = falcon.App()
wsgi.add_route("/hello", Hello())

asgi = falcon.asgi.App()
asgi.add_route("/hello", AsyncHello())
