"""Starlette benchmark app: exposes the ASGI callable ``asgi``.

Add further endpoints as handlers plus entries in ``ROUTES``.
"""

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

HELLO = "Hello World!"


async def hello(request: Request) -> Response:
    return PlainTextResponse(HELLO)  # text/plain; charset=utf-8


ROUTES = [
    Route("/hello", hello, methods=["GET"]),
]

asgi = Starlette(debug=False, routes=ROUTES)
