"""The connection-shape routes in aiohttp's own idiom (it runs its own server, not WSGI or ASGI):
the same answers as pwb_shapes_wsgi.py and pwb_shapes_asgi.py, from pwb_shapes."""

from __future__ import annotations

import asyncio
import time

from aiohttp import WSMsgType, web

import pwb_shapes as shapes


async def stream(request: web.Request) -> web.StreamResponse:
    response = web.StreamResponse(headers={"Content-Type": shapes.OCTET_STREAM,
                                           "Content-Length": str(shapes.STREAM_LENGTH)})
    await response.prepare(request)
    for _ in range(shapes.CHUNKS):
        await response.write(shapes.CHUNK)
    await response.write_eof()
    return response


async def upload(request: web.Request) -> web.Response:
    count = 0
    async for data in request.content.iter_chunked(shapes.READ_SIZE):
        count += len(data)
    return web.Response(body=str(count).encode(), headers={"Content-Type": shapes.TEXT_PLAIN})


async def sse(request: web.Request) -> web.StreamResponse:
    n, rate = shapes.event_params(request.query_string)
    response = web.StreamResponse(headers={"Content-Type": shapes.EVENT_STREAM, "Cache-Control": "no-cache"})
    await response.prepare(request)
    start = time.monotonic()
    try:
        for k in range(n):
            wait = shapes.due(start, k, rate)
            if wait > 0:
                await asyncio.sleep(wait)
            await response.write(shapes.event(k))
        await response.write_eof()
    except ConnectionError:
        pass  # the client left
    return response


async def echo(request: web.Request) -> web.WebSocketResponse:
    ws = web.WebSocketResponse()
    await ws.prepare(request)
    async for message in ws:
        if message.type == WSMsgType.TEXT:
            await ws.send_str(message.data)
        elif message.type == WSMsgType.BINARY:
            await ws.send_bytes(message.data)
    return ws


ROUTES = [web.get(shapes.STREAM_PATH, stream), web.route("*", shapes.UPLOAD_PATH, upload),
          web.get(shapes.SSE_PATH, sse), web.get(shapes.WS_PATH, echo)]
