"""Flask copy of the benchmark app (WSGI: ``wsgi``). Bodies come from pwb_common."""

from __future__ import annotations

from flask import Flask, Response

import pwb_common as pwb
import pwb_shapes_wsgi

app = Flask(__name__)


@app.get("/hello")
def hello() -> Response:
    return Response(pwb.hello_body(), content_type=pwb.TEXT_PLAIN)


@app.get("/db")
def db() -> Response:
    return Response(pwb.db(), content_type=pwb.APPLICATION_JSON)


@app.get("/upstream")
def upstream() -> Response:
    return Response(pwb.upstream(), content_type=pwb.APPLICATION_JSON)


@app.get("/template")
def template() -> Response:
    return Response(pwb.template_body(), content_type=pwb.TEXT_HTML)


@app.get("/api")
def api() -> Response:
    return Response(pwb.api(), content_type=pwb.APPLICATION_JSON)


@app.get("/posts")
def posts() -> Response:
    return Response(pwb.posts(), content_type=pwb.APPLICATION_JSON)


@app.get("/cpu")
def cpu() -> Response:
    return Response(pwb.cpu_body(), content_type=pwb.APPLICATION_JSON)


wsgi = pwb_shapes_wsgi.wrap(app)
