"""Workloads: the endpoint each one loads and the exact answer every stack must give."""

from __future__ import annotations

from dataclasses import dataclass

from pywebbench.errors import UserError


@dataclass(frozen=True)
class Expectation:
    status: int
    media_type: str
    body: bytes


@dataclass(frozen=True)
class Workload:
    name: str
    path: str
    description: str
    expect: Expectation


HELLO = Workload(
    name="hello",
    path="/hello",
    description="plain text 'Hello World!': the framework and server overhead alone",
    expect=Expectation(status=200, media_type="text/plain", body=b"Hello World!"),
)

WORKLOADS: dict[str, Workload] = {w.name: w for w in (HELLO,)}


def get_workload(name: str) -> Workload:
    try:
        return WORKLOADS[name]
    except KeyError:
        raise UserError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}") from None
