"""What a protocol other than h1 asks of a plan: h2load, which sends it, drives a closed loop of
GETs of one URL from this machine, so a run it cannot send is refused before anything starts,
one line per problem; and a stack that cannot serve it is left out with its reason."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pywebbench.catalog.model import Stack
from pywebbench.catalog.protocols import Protocol, parse_protocol
from pywebbench.catalog.workload_model import Workload
from pywebbench.errors import UserError
from pywebbench.plan.options import RunOptions

Unserved = dict[tuple[str, str], str]
"""(stack label, protocol) -> why it cannot serve it, each said once."""


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


def checked(options: RunOptions, points: Sequence[tuple[tuple[str, Any], ...]],
            workloads: Sequence[Workload]) -> Unserved:
    """A UserError, one line per problem, for every protocol of the plan h2load cannot send in it;
    else an empty record of the cells left out, for the plan to fill (`unserved`)."""
    swept = [v for point in points for name, v in point if name == "protocol"]
    protocols = [parse_protocol(str(v)) for v in swept] or [parse_protocol(options.protocol or "h1")]
    problems = [p for protocol in dict.fromkeys(protocols)
                for p in send_problems(protocol, rate=options.rate, placed=options.placed,
                                       topology=options.topology, workloads=workloads)]
    if problems:
        raise UserError("\n".join(dict.fromkeys(problems)))
    return {}


def protocol_left_out(stack: Stack, protocol: Protocol) -> str | None:
    """Why this stack cannot serve `protocol`, one line, or None when it can."""
    served = stack.server.protocols
    if protocol in served:
        return None
    names = ", ".join(p.value for p in Protocol if p in served)
    return f"{stack.server.title} ({stack.server.worker_class}) serves {names} here, not {protocol.value}"


def unserved(stack: Stack, label: str, protocol: str | None, found: Unserved) -> bool:
    """True (and why, into `found`) when `stack` cannot serve this point's protocol; h1, not asked
    for, is served by all."""
    why = None if protocol is None else protocol_left_out(stack, parse_protocol(protocol))
    if why is not None:
        found[(label, protocol or "")] = why
    return why is not None


def skips(found: Unserved, planned: int) -> list[tuple[str, str]]:
    """The cells left out, as a plan's skipped lines; a UserError, a stack a line, when nothing is
    left to run (a run over stacks none of which serves its protocol)."""
    if found and not planned:
        raise UserError("\n".join(f"{label}: {why}" for (label, _), why in found.items()))
    return [(f"{label} protocol={protocol}", why) for (label, protocol), why in found.items()]
