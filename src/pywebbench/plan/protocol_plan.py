"""What a protocol other than h1 asks of a plan: h2load, which sends it, drives a closed loop of
GETs of one URL from this machine, so a run it cannot send is refused before anything starts,
one line per problem; and a stack that cannot serve it is left out with its reason.

Who speaks it to h2load: the app server itself under the direct topology; under `--topology
nginx`, the nginx in front of it, which terminates TLS and HTTP/2 and proxies HTTP/1.1 keep-alive
to the app, so every stack it fronts is served whatever its own server speaks."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pywebbench.catalog.model import Stack
from pywebbench.catalog.protocols import Protocol, parse_protocol, protocol_of
from pywebbench.catalog.workload_model import Workload
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.results.model import TrialSpec

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
        if topology == "nginx":  # measure/placed_proxy.py's nginx on the proxy host is written for h1 only
            problems.append(f"{name}: the proxy role's nginx on another host proxies h1 only")
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


def nginx_fronts(stack: Stack, topology: str) -> bool:
    """An nginx stands between the generator and this stack's server (`--topology nginx`; nginx
    serving the static file itself is the front, not behind one)."""
    return topology == "nginx" and stack.server.native != "nginx"


def app_protocol(stack: Stack, spec: TrialSpec) -> Protocol:
    """What the app server itself is asked to speak: the window's protocol, or HTTP/1.1 in the
    clear behind an nginx that terminates it (no certificate for the app then)."""
    return Protocol.H1 if nginx_fronts(stack, spec.topology) else protocol_of(spec.protocol)


def protocol_left_out(stack: Stack, protocol: Protocol, topology: str = "direct") -> str | None:
    """Why this stack cannot serve `protocol`, one line, or None when it can (itself, or through
    the nginx in front of it)."""
    served = stack.server.protocols
    if protocol in served or nginx_fronts(stack, topology):
        return None
    names = ", ".join(p.value for p in Protocol if p in served)
    return f"{stack.server.title} ({stack.server.worker_class}) serves {names} here, not {protocol.value}"


def unserved(stack: Stack, label: str, protocol: str | None, found: Unserved, *, topology: str) -> bool:
    """True (and why, into `found`) when `stack` cannot serve this point's protocol under
    `topology`; h1, not asked for, is served by all."""
    why = None if protocol is None else protocol_left_out(stack, parse_protocol(protocol), topology)
    if why is not None:
        found[(label, protocol or "")] = why
    return why is not None


def skips(found: Unserved, planned: int) -> list[tuple[str, str]]:
    """The cells left out, as a plan's skipped lines; a UserError, a stack a line, when nothing is
    left to run (a run over stacks none of which serves its protocol)."""
    if found and not planned:
        raise UserError("\n".join(f"{label}: {why}" for (label, _), why in found.items()))
    return [(f"{label} protocol={protocol}", why) for (label, protocol), why in found.items()]
