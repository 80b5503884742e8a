"""API Star copy of the benchmark app (WSGI: ``wsgi``). Routes from pwb_routes, bodies from pwb_common.

Needs the 0.5.x server framework (0.6+ dropped it) and werkzeug<2.3 (0.5.42 imports
``werkzeug.urls.url_decode``, removed in werkzeug 3.0).
"""

from __future__ import annotations

from collections.abc import Callable

from apistar import App, Route, http

import pwb_routes
import pwb_shapes_wsgi


def handler(route: pwb_routes.Route) -> Callable[[], http.Response]:
    headers = {"Content-Type": route.content_type}

    def get() -> http.Response:
        return http.Response(route.body(), headers=headers)

    return get


# API Star names a route after its handler unless told: each gets its own name.
routes = [Route(route.path, method="GET", handler=handler(route), name=route.name)
          for route in pwb_routes.ROUTES]

wsgi = pwb_shapes_wsgi.wrap(App(routes=routes, schema_url=None, docs_url=None, static_url=None))
