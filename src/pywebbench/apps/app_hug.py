"""hug copy of the benchmark app (WSGI: ``wsgi``). hug 2.6.1 runs on falcon 2.0.0.

Routes from pwb_routes, bodies from pwb_common as ready bytes, so each route's output format
only labels them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hug

import pwb_common as pwb
import pwb_routes
import pwb_shapes_wsgi

api = hug.API(__name__)


def raw(content_type: str) -> Callable[..., bytes]:
    """A hug output format that passes the body through and sets its content type."""

    @hug.format.content_type(content_type)
    def output(content: bytes, **kwargs: Any) -> bytes:
        return content

    return output


OUTPUTS = {ctype: raw(ctype) for ctype in sorted({route.content_type for route in pwb_routes.ROUTES})}
TEXT = raw(pwb.TEXT_PLAIN)


def view(route: pwb_routes.Route) -> Callable[[], bytes]:
    def get() -> bytes:
        return route.body()

    return get


for route in pwb_routes.ROUTES:
    hug.get(route.path, api=api, output=OUTPUTS[route.content_type])(view(route))


@hug.exception(Exception, api=api, output=TEXT)
def server_error(exception: Exception, response: Any) -> bytes:
    # falcon 2 re-raises unhandled exceptions to the server; answer 500 ourselves, as the
    # other frameworks do, whatever the server would make of it.
    response.status = hug.HTTP_500
    return b"Internal Server Error"


wsgi = pwb_shapes_wsgi.wrap(api.http.server())
