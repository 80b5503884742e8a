"""The answers of the shape routes as the harness computes them itself (apps/pwb_shapes.py makes
the same bytes on the app's side), and their checks."""

from __future__ import annotations

import re

from pywebbench.catalog.workload_model import Expected

HELLO = b"Hello World!"
CHUNK = bytes(range(256)) * 256
STREAM_BODY = CHUNK * 16
"""/stream: 1 MiB, 64 KiB chunks of the bytes 0..255."""
UPLOAD_BYTES = 1024 * 1024
DEFAULT_EVENTS = 3
_EVENT = re.compile(rb"id: (\d+)\ndata: (\d+)\n\n")


def check_hello(body: bytes, expected: Expected) -> str | None:
    return None if body == HELLO else f"body {body[:60]!r}, expected {HELLO!r}"


def check_stream(body: bytes, expected: Expected) -> str | None:
    if body == STREAM_BODY:
        return None
    return f"{len(body)} bytes, expected the {len(STREAM_BODY)} bytes of 16 x 64 KiB chunks (0..255 repeated)"


def check_upload(body: bytes, expected: Expected) -> str | None:
    """/upload answers the length of the body it read."""
    return None if body == str(UPLOAD_BYTES).encode() else f"body {body[:60]!r}, expected b'{UPLOAD_BYTES}'"


def check_events(body: bytes, expected: Expected) -> str | None:
    """A plain GET /sse: 3 events, numbered from 0, each stamped with its send time in ns."""
    events = [m for m in _EVENT.finditer(body)]
    ids = [int(m.group(1)) for m in events]
    if ids != list(range(DEFAULT_EVENTS)) or b"".join(m.group(0) for m in events) != body:
        return f"body {body[:80]!r} is not {DEFAULT_EVENTS} events 'id: K\\ndata: NS\\n\\n'"
    return None
