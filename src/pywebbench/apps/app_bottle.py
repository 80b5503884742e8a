"""Bottle copy of the benchmark app (WSGI: ``wsgi``)."""

from __future__ import annotations

from bottle import Bottle, response

TEXT_PLAIN = "text/plain; charset=utf-8"

app = Bottle()


@app.get("/hello")
def hello() -> str:
    response.content_type = TEXT_PLAIN
    return "Hello World!"


# Further endpoints (DB query, upstream call, template) go here, beside /hello.

wsgi = app
