"""aioflask benchmark app: exposes the ASGI callable ``asgi``.

aioflask 0.4.0 runs Flask's request handling in greenlets (greenletio) and needs Flask 2.0/2.1
(it imports ``flask.globals._app_ctx_stack`` and ``flask.helpers.get_env``) with Werkzeug < 3.
Add further ``async def`` views beside ``hello``.
"""

from __future__ import annotations

from aioflask import Flask, Response

HELLO = "Hello World!"
TEXT_PLAIN = "text/plain; charset=utf-8"

app = Flask(__name__)


@app.get("/hello")
async def hello() -> Response:
    return Response(HELLO, content_type=TEXT_PLAIN)


asgi = app
