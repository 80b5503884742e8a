"""API Star copy of the benchmark app (WSGI: ``wsgi``).

Needs the 0.5.x server framework (0.6+ dropped it) and werkzeug<2.3 (0.5.42 imports
``werkzeug.urls.url_decode``, removed in werkzeug 3.0).
"""

from __future__ import annotations

from apistar import App, Route, http

TEXT_PLAIN = "text/plain; charset=utf-8"


def hello() -> http.Response:
    return http.Response(b"Hello World!", headers={"Content-Type": TEXT_PLAIN})


# Further endpoints (DB query, upstream call, template) go here, beside /hello.

routes = [
    Route("/hello", method="GET", handler=hello),
]

wsgi = App(routes=routes, schema_url=None, docs_url=None, static_url=None)
