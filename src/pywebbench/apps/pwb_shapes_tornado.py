"""The connection-shape routes in Tornado's own idiom (it runs its own server, not WSGI or ASGI):
the same answers as pwb_shapes_wsgi.py and pwb_shapes_asgi.py, from pwb_shapes."""

from __future__ import annotations

import asyncio
import time

import tornado.iostream
import tornado.web
import tornado.websocket

import pwb_shapes as shapes


class Stream(tornado.web.RequestHandler):
    async def get(self) -> None:
        self.set_header("Content-Type", shapes.OCTET_STREAM)
        self.set_header("Content-Length", str(shapes.STREAM_LENGTH))
        for _ in range(shapes.CHUNKS):
            self.write(shapes.CHUNK)
            await self.flush()
        self.finish()


@tornado.web.stream_request_body
class Upload(tornado.web.RequestHandler):
    """Counts the body as it arrives, never holding it whole."""

    def prepare(self) -> None:
        self.count = 0

    def data_received(self, chunk: bytes) -> None:
        self.count += len(chunk)

    def post(self) -> None:
        self.set_header("Content-Type", shapes.TEXT_PLAIN)
        self.finish(str(self.count).encode())

    put = post


class Events(tornado.web.RequestHandler):
    async def get(self) -> None:
        n, rate = shapes.event_params(self.request.query)
        self.set_header("Content-Type", shapes.EVENT_STREAM)
        self.set_header("Cache-Control", "no-cache")
        start = time.monotonic()
        try:
            for k in range(n):
                wait = shapes.due(start, k, rate)
                if wait > 0:
                    await asyncio.sleep(wait)
                self.write(shapes.event(k))
                await self.flush()
        except tornado.iostream.StreamClosedError:
            return  # the client left
        self.finish()


class Echo(tornado.websocket.WebSocketHandler):
    def check_origin(self, origin: str) -> bool:
        return True

    async def on_message(self, message: str | bytes) -> None:
        await self.write_message(message, binary=isinstance(message, bytes))


ROUTES: list[tuple[str, type[tornado.web.RequestHandler], dict[str, object]]] = [
    (shapes.STREAM_PATH, Stream, {}), (shapes.UPLOAD_PATH, Upload, {}), (shapes.SSE_PATH, Events, {}),
    (shapes.WS_PATH, Echo, {}),
]
