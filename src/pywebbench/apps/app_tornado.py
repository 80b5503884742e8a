"""Tornado benchmark app on Tornado's own server.

    python app_tornado.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 starts N forked processes, each binding with SO_REUSEPORT (Tornado's recommended
multi-process mode); the parent forwards SIGTERM/SIGINT to them once. Tornado runs on asyncio,
so ``--loop uvloop`` just swaps the asyncio loop. Routes come from pwb_routes, bodies from
pwb_common as ready bytes. /db, /api, /posts and /upstream await the async backend (asyncpg,
aiohttp); with a sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the
blocking functions right on the event loop instead, on purpose.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import tornado.web

import pwb_common as pwb
import pwb_routes
import pwb_serve
import pwb_shapes_tornado


Body = Callable[[], Awaitable[bytes]]


class Endpoint(tornado.web.RequestHandler):
    def initialize(self, body: Body, content_type: str) -> None:
        self._body = body
        self._content_type = content_type

    async def get(self) -> None:
        data = await self._body()
        self.set_header("Content-Type", self._content_type)
        self.finish(data)


ROUTES: list[tuple[str, type[tornado.web.RequestHandler], dict[str, object]]] = [
    (route.path, Endpoint, {"body": route.on_loop(), "content_type": route.content_type})
    for route in pwb_routes.ROUTES
]

def make_app() -> tornado.web.Application:
    # log_function silences Tornado's per-request access log.
    return tornado.web.Application(ROUTES + pwb_shapes_tornado.ROUTES, debug=False, log_function=lambda handler: None)


async def run_server(host: str, port: int, reuse_port: bool) -> None:
    server = make_app().listen(port, address=host, reuse_port=reuse_port, xheaders=False)
    await pwb_serve.wait_for_stop_signal()
    server.stop()  # stop accepting; then close open (keep-alive) connections
    await asyncio.wait_for(server.close_all_connections(), timeout=5.0)
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


if __name__ == "__main__":
    pwb_serve.main(run_server, description=__doc__)
