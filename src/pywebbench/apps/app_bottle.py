"""Bottle copy of the benchmark app (WSGI: ``wsgi``). Routes from pwb_routes, bodies from pwb_common."""

from __future__ import annotations

from collections.abc import Callable

from bottle import Bottle, response

import pwb_routes
import pwb_shapes_wsgi

app = Bottle()


def view(route: pwb_routes.Route) -> Callable[[], bytes]:
    def get() -> bytes:
        response.content_type = route.content_type
        return route.body()

    return get


for route in pwb_routes.ROUTES:
    app.get(route.path, name=route.name)(view(route))


wsgi = pwb_shapes_wsgi.wrap(app)
