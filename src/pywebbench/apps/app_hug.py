"""hug copy of the benchmark app (WSGI: ``wsgi``). hug 2.6.1 runs on falcon 2.0.0.

Bodies come from pwb_common as ready bytes, so each route's output format only labels them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import hug

import pwb_common as pwb
import pwb_shapes_wsgi

api = hug.API(__name__)


def raw(content_type: str) -> Callable[..., bytes]:
    """A hug output format that passes the body through and sets its content type."""

    @hug.format.content_type(content_type)
    def output(content: bytes, **kwargs: Any) -> bytes:
        return content

    return output


TEXT, JSON, HTML = raw(pwb.TEXT_PLAIN), raw(pwb.APPLICATION_JSON), raw(pwb.TEXT_HTML)


@hug.get("/hello", api=api, output=TEXT)
def hello() -> bytes:
    return pwb.hello_body()


@hug.get("/db", api=api, output=JSON)
def db() -> bytes:
    return pwb.db()


@hug.get("/upstream", api=api, output=JSON)
def upstream() -> bytes:
    return pwb.upstream()


@hug.get("/template", api=api, output=HTML)
def template() -> bytes:
    return pwb.template_body()


@hug.get("/api", api=api, output=JSON)
def api_() -> bytes:
    return pwb.api()


@hug.get("/posts", api=api, output=JSON)
def posts() -> bytes:
    return pwb.posts()


@hug.get("/cpu", api=api, output=JSON)
def cpu() -> bytes:
    return pwb.cpu_body()


@hug.exception(Exception, api=api, output=TEXT)
def server_error(exception: Exception, response: Any) -> bytes:
    # falcon 2 re-raises unhandled exceptions to the server; answer 500 ourselves, as the
    # other frameworks do, whatever the server would make of it.
    response.status = hug.HTTP_500
    return b"Internal Server Error"


wsgi = pwb_shapes_wsgi.wrap(api.http.server())
