"""What the connection-shape routes answer (CONTRACT.md, "Connection shapes"), once for every
interface: the bodies and the event format. Standard library only: every stack imports it.

pwb_shapes_wsgi.py and pwb_shapes_asgi.py serve these routes in front of any framework's app;
aiohttp, Tornado and Sanic, which run their own servers, serve them in their own idiom
(pwb_shapes_aiohttp.py, pwb_shapes_tornado.py, pwb_shapes_sanic.py).
"""

from __future__ import annotations

import time
from urllib.parse import parse_qs

STREAM_PATH = "/stream"
UPLOAD_PATH = "/upload"
SSE_PATH = "/sse"
WS_PATH = "/ws"

OCTET_STREAM = "application/octet-stream"
EVENT_STREAM = "text/event-stream"
TEXT_PLAIN = "text/plain; charset=utf-8"

CHUNK = bytes(range(256)) * 256
"""64 KiB: the bytes 0..255 over and over."""
CHUNKS = 16
STREAM_LENGTH = len(CHUNK) * CHUNKS
"""/stream's answer: 1 MiB, written chunk by chunk."""
READ_SIZE = 64 * 1024
"""/upload reads its body this much at a time: never the whole body in memory."""

DEFAULT_EVENTS = 3
DEFAULT_EVENT_RATE = 1000.0
MAX_EVENTS = 100_000


def event_params(query: str) -> tuple[int, float]:
    """/sse?n=EVENTS&rate=PER_SECOND: how many events and how fast (3 at 1000/s by default, so a
    plain GET answers at once); a bad value reads as its default."""
    fields = parse_qs(query)
    n, rate = DEFAULT_EVENTS, DEFAULT_EVENT_RATE
    try:
        n = min(max(0, int(fields.get("n", [str(n)])[0])), MAX_EVENTS)
    except ValueError:
        pass
    try:
        given = float(fields.get("rate", [str(rate)])[0])
        rate = given if given > 0 else rate
    except ValueError:
        pass
    return n, rate


def event(k: int) -> bytes:
    """Event k, stamped with the wall clock as it is sent (ns): the client, on the same host,
    takes its delivery latency from it."""
    return b"id: %d\ndata: %d\n\n" % (k, time.time_ns())


def due(start: float, k: int, rate: float) -> float:
    """Seconds from now until event k is due: paced from the stream's start (time.monotonic()),
    so one late event does not delay the rest."""
    return start + k / rate - time.monotonic()
