"""aiohttp benchmark app on aiohttp's own server.

    python app_aiohttp.py --host H --port P --workers N [--loop uvloop|asyncio]

N > 1 starts N forked processes, each binding with SO_REUSEPORT; the parent forwards
SIGTERM/SIGINT to them once. For gunicorn use ``app_aiohttp:app`` (a ``web.Application``)
with ``--worker-class aiohttp.GunicornUVLoopWebWorker`` (or ``aiohttp.GunicornWebWorker``).
Routes come from pwb_routes, bodies from pwb_common as ready bytes. /db, /api, /posts and
/upstream await the async backend (asyncpg, aiohttp); with a sync PWB_DRIVER (seed 001's
blocking variant, PWB_DRIVER=psycopg) they call the blocking functions right on the event loop,
on purpose.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from aiohttp import web

import pwb_common as pwb
import pwb_routes
import pwb_serve
import pwb_shapes_aiohttp


Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[web.Request], Awaitable[web.Response]]:
    async def get(request: web.Request) -> web.Response:
        return web.Response(body=await body(), headers={"Content-Type": content_type})

    return get


ROUTES = [web.get(route.path, endpoint(route.on_loop(), route.content_type)) for route in pwb_routes.ROUTES]


async def close_backends(application: web.Application) -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


def make_app() -> web.Application:
    application = web.Application()
    application.add_routes(ROUTES)
    application.add_routes(pwb_shapes_aiohttp.ROUTES)
    application.on_cleanup.append(close_backends)
    return application


app = make_app()  # target for gunicorn's aiohttp workers


async def run_server(host: str, port: int, reuse_port: bool) -> None:
    runner = web.AppRunner(
        make_app(), access_log=None, keepalive_timeout=75.0, shutdown_timeout=5.0
    )  # keep-alive as web.run_app's default; AppRunner's own is 3630 s
    await runner.setup()
    await web.TCPSite(runner, host, port, reuse_port=reuse_port).start()
    await pwb_serve.wait_for_stop_signal()
    await runner.cleanup()


if __name__ == "__main__":
    pwb_serve.main(run_server, description=__doc__)
