"""The connection-shape routes in Sanic's own idiom (on its own server and under ASGI servers
alike): the same answers as pwb_shapes_wsgi.py and pwb_shapes_asgi.py, from pwb_shapes."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from sanic import HTTPResponse, Request, Sanic

import pwb_shapes as shapes


async def stream(request: Request) -> None:
    response = await request.respond(content_type=shapes.OCTET_STREAM)
    for _ in range(shapes.CHUNKS):
        await response.send(shapes.CHUNK)
    await response.eof()


async def upload(request: Request) -> HTTPResponse:
    answer = str(len(request.body)).encode()
    return HTTPResponse(answer, headers={"content-length": str(len(answer))}, content_type=shapes.TEXT_PLAIN)


async def sse(request: Request) -> None:
    n, rate = shapes.event_params(request.query_string)
    response = await request.respond(content_type=shapes.EVENT_STREAM, headers={"cache-control": "no-cache"})
    start = time.monotonic()
    for k in range(n):
        wait = shapes.due(start, k, rate)
        if wait > 0:
            await asyncio.sleep(wait)
        await response.send(shapes.event(k))
    await response.eof()


async def echo(request: Request, ws: Any) -> None:
    async for message in ws:
        await ws.send(message)


def add_routes(app: Sanic[Any, Any]) -> None:
    app.add_route(stream, shapes.STREAM_PATH, methods=["GET"], name="shape_stream")
    app.add_route(upload, shapes.UPLOAD_PATH, methods=["POST", "PUT"], name="shape_upload")
    app.add_route(sse, shapes.SSE_PATH, methods=["GET"], name="shape_sse")
    app.add_websocket_route(echo, shapes.WS_PATH, name="shape_ws")
