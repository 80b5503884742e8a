"""Flask copy of the benchmark app (WSGI: ``wsgi``). Routes from pwb_routes, bodies from pwb_common."""

from __future__ import annotations

from collections.abc import Callable

from flask import Flask, Response

import pwb_routes
import pwb_shapes_wsgi

app = Flask(__name__)


def view(route: pwb_routes.Route) -> Callable[[], Response]:
    def get() -> Response:
        return Response(route.body(), content_type=route.content_type)

    return get


for route in pwb_routes.ROUTES:
    app.add_url_rule(route.path, endpoint=route.name, view_func=view(route), methods=["GET"])  # as @app.get


wsgi = pwb_shapes_wsgi.wrap(app)
