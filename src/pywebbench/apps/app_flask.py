"""Flask copy of the benchmark app (WSGI: ``wsgi``)."""

from __future__ import annotations

from flask import Flask, Response

TEXT_PLAIN = "text/plain; charset=utf-8"

app = Flask(__name__)


@app.get("/hello")
def hello() -> Response:
    return Response("Hello World!", content_type=TEXT_PLAIN)


# Further endpoints (DB query, upstream call, template) go here, beside /hello.

wsgi = app
