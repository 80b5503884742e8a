"""ws-echo: WebSocket echo under N connections (the run's --connections), each sending its next
message when the last one came back: messages per second and the round trip's p99. Served over
ASGI's websocket scope (apps/pwb_shapes_asgi.py) and by aiohttp, Tornado and Sanic in their own
idiom; WSGI has no WebSocket. No WebSocket load generator from the registries reachable here
fits (docs/reference/stacks-and-workloads.md says which were weighed): the Go driver
`shapes wsecho` (gorilla/websocket) sends it."""

from __future__ import annotations

from pywebbench.catalog.model import Stack
from pywebbench.catalog.shapes import wsprobe
from pywebbench.catalog.shapes.base import Drive, Shape, websocket
from pywebbench.catalog.workload_model import Expected, Workload

MESSAGE_BYTES = 32
WEBSOCKETS = "websockets==15.0.1"
"""Uvicorn speaks WebSocket only with a WebSocket library installed beside it (uvicorn[standard]
brings websockets); the other ASGI servers bring their own (Hypercorn wsproto, Granian its Rust one)."""
PROBE = b"pywebbench ws-echo probe"


def requirements(stack: Stack) -> tuple[str, ...]:
    served_by_uvicorn = any(r.startswith("uvicorn==") for r in stack.server.requirements)
    return (WEBSOCKETS,) if served_by_uvicorn else ()


def probe(host: str, port: int) -> str | None:
    return wsprobe.echo(host, port, "/ws", PROBE)


def check_echo(body: bytes, expected: Expected) -> str | None:
    return None if body == PROBE else f"echo {body[:60]!r}, expected {PROBE!r}"


WORKLOAD = Workload(
    "ws-echo", "/ws", "", "WebSocket echo on --connections connections: messages/s, round-trip p99", check_echo,
    shape=Shape(
        measures="messages echoed per second and the round trip's p99",
        unit="messages/s", left_out=websocket, requirements=requirements, probe=probe,
        drive=Drive(command="wsecho", flags=(("-size", str(MESSAGE_BYTES)),)),
    ),
)
