"""BlackSheep benchmark app: exposes the ASGI callable ``asgi``.

Routes come from pwb_routes, bodies from pwb_common as ready bytes, sent as raw ``Content`` with
CONTRACT.md's content types. /db, /api, /posts and /upstream await the async backend (asyncpg,
aiohttp); with a sync PWB_DRIVER (seed 001's blocking variant, PWB_DRIVER=psycopg) they call the
blocking functions right on the event loop instead, on purpose.
"""

# No "from __future__ import annotations": BlackSheep binds handler parameters by their
# annotations, which must stay real classes.
from collections.abc import Awaitable, Callable

from blacksheep import Application, Content, Request, Response

import pwb_common as pwb
import pwb_routes
import pwb_shapes_asgi

Body = Callable[[], Awaitable[bytes]]


def endpoint(body: Body, content_type: str) -> Callable[[Request], Awaitable[Response]]:
    ctype = content_type.encode()

    async def get(request: Request) -> Response:
        return Response(200, None, Content(ctype, await body()))

    return get


async def close_backends(application: Application) -> None:
    await pwb.aclose_async()  # this worker's asyncpg pool and aiohttp session


app = Application(show_error_details=False)
for route in pwb_routes.ROUTES:
    app.router.add_get(route.path, endpoint(route.on_loop(), route.content_type))
app.on_stop += close_backends

asgi = pwb_shapes_asgi.wrap(app)
