"""API Star copy of the benchmark app (WSGI: ``wsgi``). Bodies come from pwb_common.

Needs the 0.5.x server framework (0.6+ dropped it) and werkzeug<2.3 (0.5.42 imports
``werkzeug.urls.url_decode``, removed in werkzeug 3.0).
"""

from __future__ import annotations

from apistar import App, Route, http

import pwb_common as pwb
import pwb_shapes_wsgi

TEXT = {"Content-Type": pwb.TEXT_PLAIN}
JSON = {"Content-Type": pwb.APPLICATION_JSON}
HTML = {"Content-Type": pwb.TEXT_HTML}


def hello() -> http.Response:
    return http.Response(pwb.hello_body(), headers=TEXT)


def db() -> http.Response:
    return http.Response(pwb.db(), headers=JSON)


def upstream() -> http.Response:
    return http.Response(pwb.upstream(), headers=JSON)


def template() -> http.Response:
    return http.Response(pwb.template_body(), headers=HTML)


def api() -> http.Response:
    return http.Response(pwb.api(), headers=JSON)


def posts() -> http.Response:
    return http.Response(pwb.posts(), headers=JSON)


def cpu() -> http.Response:
    return http.Response(pwb.cpu_body(), headers=JSON)


routes = [
    Route("/hello", method="GET", handler=hello),
    Route("/db", method="GET", handler=db),
    Route("/upstream", method="GET", handler=upstream),
    Route("/template", method="GET", handler=template),
    Route("/api", method="GET", handler=api),
    Route("/posts", method="GET", handler=posts),
    Route("/cpu", method="GET", handler=cpu),
]

wsgi = pwb_shapes_wsgi.wrap(App(routes=routes, schema_url=None, docs_url=None, static_url=None))
