"""The connection-shape routes for any WSGI app: /stream, /upload and /sse answered here, every
other path passed to the framework's app untouched (so its own routes answer byte for byte as
before). An app module wraps its callable in one line: ``wsgi = pwb_shapes_wsgi.wrap(app)``.

WSGI has no WebSocket: /ws goes to the framework (a 404), and the harness leaves ws-echo out for
WSGI stacks with its reason. A sync worker holds one stream per thread for its whole length:
that is what /sse measures on these servers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pwb_shapes as shapes

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
App = Callable[[Environ, StartResponse], Iterable[bytes]]


def stream(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
    start_response("200 OK", [("Content-Type", shapes.OCTET_STREAM), ("Content-Length", str(shapes.STREAM_LENGTH))])
    return (shapes.CHUNK for _ in range(shapes.CHUNKS))  # an iterable: the server writes each chunk as it comes


def upload(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
    remaining = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"]
    count = 0
    while remaining > 0:
        data = body.read(min(shapes.READ_SIZE, remaining))
        if not data:
            break
        count += len(data)
        remaining -= len(data)
    answer = str(count).encode()
    start_response("200 OK", [("Content-Type", shapes.TEXT_PLAIN), ("Content-Length", str(len(answer)))])
    return [answer]


def sse(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
    n, rate = shapes.event_params(environ.get("QUERY_STRING", ""))
    start_response("200 OK", [("Content-Type", shapes.EVENT_STREAM), ("Cache-Control", "no-cache")])
    return _events(n, rate)


def _events(n: int, rate: float) -> Iterator[bytes]:
    start = time.monotonic()
    for k in range(n):
        wait = shapes.due(start, k, rate)
        if wait > 0:
            time.sleep(wait)  # gevent and eventlet patch it; a sync worker waits here, holding its thread
        yield shapes.event(k)


ROUTES: dict[str, App] = {shapes.STREAM_PATH: stream, shapes.UPLOAD_PATH: upload, shapes.SSE_PATH: sse}


def wrap(app: App) -> App:
    def wsgi(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        route = ROUTES.get(environ.get("PATH_INFO", ""))
        return (route or app)(environ, start_response)

    return wsgi
