"""Quart benchmark app: exposes the ASGI callable ``asgi``.

Add further endpoints as ``@app.get(...)`` handlers beside ``hello``.
"""

from quart import Quart, Response

HELLO = "Hello World!"
TEXT_PLAIN = "text/plain; charset=utf-8"

app = Quart(__name__)


@app.get("/hello")
async def hello() -> Response:
    return Response(HELLO, content_type=TEXT_PLAIN)


asgi = app
