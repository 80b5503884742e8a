"""The connection-shape routes for any ASGI app: /stream, /upload, /sse and the WebSocket echo
/ws answered here, every other scope (lifespan included) passed to the framework's app
untouched. An app module wraps its callable in one line: ``asgi = pwb_shapes_asgi.wrap(app)``.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import pwb_shapes as shapes

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


async def _start(send: Send, content_type: str, length: int | None = None) -> None:
    headers = [(b"content-type", content_type.encode())]
    if length is not None:
        headers.append((b"content-length", str(length).encode()))
    else:
        headers.append((b"cache-control", b"no-cache"))
    await send({"type": "http.response.start", "status": 200, "headers": headers})


async def stream(scope: Scope, receive: Receive, send: Send) -> None:
    await _start(send, shapes.OCTET_STREAM, shapes.STREAM_LENGTH)
    for k in range(shapes.CHUNKS):
        await send({"type": "http.response.body", "body": shapes.CHUNK, "more_body": k < shapes.CHUNKS - 1})


async def upload(scope: Scope, receive: Receive, send: Send) -> None:
    count = 0
    while True:
        message = await receive()
        count += len(message.get("body", b""))
        if message["type"] != "http.request" or not message.get("more_body", False):
            break
    answer = str(count).encode()
    await _start(send, shapes.TEXT_PLAIN, len(answer))
    await send({"type": "http.response.body", "body": answer})


async def sse(scope: Scope, receive: Receive, send: Send) -> None:
    n, rate = shapes.event_params(scope.get("query_string", b"").decode("latin-1"))
    gone = asyncio.ensure_future(_disconnect(receive))  # a client that left stops its stream
    try:
        await _start(send, shapes.EVENT_STREAM)
        start = time.monotonic()
        for k in range(n):
            wait = shapes.due(start, k, rate)
            if wait > 0:
                await asyncio.sleep(wait)
            if gone.done():
                return
            await send({"type": "http.response.body", "body": shapes.event(k), "more_body": True})
        await send({"type": "http.response.body", "body": b""})
    except OSError:
        return  # the client left between two events (some servers raise from send)
    finally:
        gone.cancel()


async def _disconnect(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def echo(scope: Scope, receive: Receive, send: Send) -> None:
    while True:
        message = await receive()
        kind = message["type"]
        if kind == "websocket.connect":
            await send({"type": "websocket.accept"})
        elif kind == "websocket.receive":
            text = message.get("text")
            await send({"type": "websocket.send", "text": text} if text is not None
                       else {"type": "websocket.send", "bytes": message.get("bytes") or b""})
        else:  # websocket.disconnect
            return


HTTP_ROUTES: dict[str, App] = {shapes.STREAM_PATH: stream, shapes.UPLOAD_PATH: upload, shapes.SSE_PATH: sse}


def wrap(app: App) -> App:
    async def asgi(scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path in HTTP_ROUTES:
            await HTTP_ROUTES[path](scope, receive, send)
        elif scope["type"] == "websocket" and path == shapes.WS_PATH:
            await echo(scope, receive, send)
        else:
            await app(scope, receive, send)

    return asgi
