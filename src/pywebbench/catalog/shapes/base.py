"""What makes a workload a connection shape: which stacks can serve it (and why not), what a
stack's environment needs for it, how its answer is checked where one GET is not its answer,
and how a window loads it. A shape's module holds all of it; the harness asks these fields
and never a shape's name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pywebbench.catalog.model import Interface, Stack

Probe = Callable[[str, int], str | None]
"""(host, port) -> None when the server answers the shape's own protocol exactly, else what differs."""


@dataclass(frozen=True)
class Drive:
    """How a window loads a shape: the run's HTTP generator with keep-alive or a body of its own,
    or a subcommand of the Go command `shapes` (stage/reference/go/cmd/shapes)."""

    command: str | None = None
    """idle, sse or wsecho: the Go driver; None: the run's HTTP generator (wrk, oha, ...)."""
    keepalive: bool = True
    """False: a new TCP connection per request (`Connection: close`)."""
    method: str = "GET"
    body_bytes: int = 0
    """Each request's body (an upload): this many bytes."""
    flags: tuple[tuple[str, str], ...] = ()
    """The Go driver's own settings (-rate, -event-rate, -size), beside the window's -connections."""


def everyone(stack: Stack) -> str | None:
    return None


def nothing(stack: Stack) -> tuple[str, ...]:
    return ()


@dataclass(frozen=True)
class Shape:
    measures: str
    """What it measures, one line (docs and `list`)."""
    unit: str = "req/s"
    """What the window's rate counts: req/s, events/s, messages/s."""
    left_out: Callable[[Stack], str | None] = everyone
    """Why a stack cannot serve it (one line, shown where the combination is left out), None when it can."""
    requirements: Callable[[Stack], tuple[str, ...]] = nothing
    """Packages a Python stack's environment needs to serve it (a WebSocket library)."""
    probe: Probe | None = None
    """Its answer checked by its own protocol (a POST, a WebSocket echo) instead of one GET of its path."""
    drive: Drive = Drive()
    paced: bool = False
    """It offers a fixed rate (events, the active requests): its ceiling is whether the generator keeps
    that rate against a server that costs nothing, not a rate a stack may come near."""


def python_apps(stack: Stack) -> str | None:
    """Served by the Python apps' shape routes (apps/pwb_shapes_*.py), not by the Go reference."""
    if stack.server.native is not None:
        return f"{stack.server.title} serves the app contract's routes only, not the shape routes"
    return None


def websocket(stack: Stack) -> str | None:
    """WebSocket needs ASGI or a framework's own server: WSGI has none."""
    if (why := python_apps(stack)) is not None:
        return why
    if stack.server.interface is Interface.WSGI:
        return f"WSGI has no WebSocket ({stack.server.title} {stack.server.worker_class} serves WSGI)"
    return None
