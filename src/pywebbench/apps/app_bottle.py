"""Bottle copy of the benchmark app (WSGI: ``wsgi``). Bodies come from pwb_common."""

from __future__ import annotations

from bottle import Bottle, response

import pwb_common as pwb
import pwb_shapes_wsgi

app = Bottle()


@app.get("/hello")
def hello() -> bytes:
    response.content_type = pwb.TEXT_PLAIN
    return pwb.hello_body()


@app.get("/db")
def db() -> bytes:
    response.content_type = pwb.APPLICATION_JSON
    return pwb.db()


@app.get("/upstream")
def upstream() -> bytes:
    response.content_type = pwb.APPLICATION_JSON
    return pwb.upstream()


@app.get("/template")
def template() -> bytes:
    response.content_type = pwb.TEXT_HTML
    return pwb.template_body()


@app.get("/api")
def api() -> bytes:
    response.content_type = pwb.APPLICATION_JSON
    return pwb.api()


@app.get("/posts")
def posts() -> bytes:
    response.content_type = pwb.APPLICATION_JSON
    return pwb.posts()


@app.get("/cpu")
def cpu() -> bytes:
    response.content_type = pwb.APPLICATION_JSON
    return pwb.cpu_body()


wsgi = pwb_shapes_wsgi.wrap(app)
