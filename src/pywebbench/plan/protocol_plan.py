"""What a protocol other than h1 asks of a plan: h2load, which sends it, drives a closed loop of
GETs of one URL from this machine, so a run it cannot send is refused before anything starts,
one line per problem; and a stack that cannot serve it is left out with its reason."""

from __future__ import annotations

from collections.abc import Sequence

from pywebbench.catalog.model import Stack
from pywebbench.catalog.protocols import Protocol, parse_protocol, protocol_left_out
from pywebbench.catalog.workload_model import Workload


def send_problems(protocol: Protocol, *, rate: float | None, placed: bool, topology: str,
                  workloads: Sequence[Workload]) -> list[str]:
    """Why h2load cannot send `protocol` in this run, one line each; [] for h1 (the run's generator)."""
    if protocol is Protocol.H1:
        return []
    name = f"--protocol {protocol.value}"
    problems = []
    if rate is not None:
        problems.append(f"{name} is sent by h2load, closed loop only: drop --rate, or use --protocol h1")
    if placed:
        problems.append(f"{name} is sent by h2load on this machine: it does not run on --hosts or the netns rig")
    if topology == "nginx":
        problems.append(f"{name} is served by the app server itself: the nginx topology proxies h1 only here")
    for w in workloads:
        if w.shape is not None and (w.shape.drive.command is not None or not w.shape.drive.keepalive
                                    or w.shape.drive.method != "GET"):
            problems.append(f"{name}: the {w.name} shape is driven over h1 only")
        elif len(w.requests) > 1 or w.schedule is not None or any(r.method != "GET" or r.body for r in w.requests):
            problems.append(f"{name}: h2load sends GETs of one URL, not the {w.name} traffic mix")
    return problems


def protocols_of(value: str | None, swept: Sequence[object]) -> tuple[Protocol, ...]:
    """The protocols a plan runs: the knob's values, else the option's (h1 when not given)."""
    if swept:
        return tuple(parse_protocol(str(v)) for v in swept)
    return (parse_protocol(value),) if value is not None else (Protocol.H1,)


def left_out(stack: Stack, protocol: str | None) -> str | None:
    """Why `stack` cannot serve this point's protocol, or None (h1, not asked for, is served by all)."""
    return None if protocol is None else protocol_left_out(stack, parse_protocol(protocol))
