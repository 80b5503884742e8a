"""The load generators a run can use, and what each supports; the checks ask these, not names.

The generators themselves (how each is run and read) are loadgen/; this is what the plan needs
to know of them before anything starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol


class _Request(Protocol):
    """One request of a mix, as `--request` gives it (plan/traffic.py) or a window sends it."""

    @property
    def method(self) -> str: ...
    @property
    def body(self) -> bytes: ...
    @property
    def headers(self) -> tuple[tuple[str, str], ...]: ...


RequestKind = tuple[str, bytes, tuple[tuple[str, str], ...]]


def request_kind(request: _Request) -> RequestKind:
    """What one oha process sends alike to every path of its URL file: method, body and headers."""
    return (request.method, request.body, request.headers)


def differ_only_in_path(mix: Sequence[_Request]) -> bool:
    """Every request of `mix` has the same method, headers and body: only the URL varies."""
    return len({request_kind(r) for r in mix}) <= 1


class Generator(StrEnum):
    WRK = "wrk"
    AB = "ab"
    OHA = "oha"
    VEGETA = "vegeta"
    REPLAY = "replay"
    SHAPES = "shapes"
    H2LOAD = "h2load"

    @property
    def open_loop(self) -> bool:
        """Keeps an offered rate (--rate, --slo), its latencies free of coordinated omission."""
        return self in (Generator.OHA, Generator.VEGETA, Generator.REPLAY)

    @property
    def shapes_only(self) -> bool:
        """Sends the connection shapes no HTTP generator sends (idle, sse, ws-echo: catalog/shapes),
        and nothing else; a window of such a shape goes to it whatever the run's generator."""
        return self is Generator.SHAPES

    @property
    def by_protocol(self) -> bool:
        """Sends the protocols other than h1 (h2c, h1-tls, h2-tls: catalog/protocols.py), closed loop,
        and is chosen by --protocol, never by name; an h1 window goes to another generator."""
        return self is Generator.H2LOAD

    @property
    def replays(self) -> bool:
        """Sends a recorded log's arrivals at their own times (`app --from-log ... --replay`), and
        nothing else: a window without a recording goes to another generator."""
        return self is Generator.REPLAY

    @classmethod
    def open_loop_names(cls) -> str:
        """The open-loop generators, for a message that asks for one: 'oha or vegeta'."""
        return " or ".join(g.value for g in cls if g.open_loop and not g.replays)

    @property
    def sends_a_mix(self) -> bool:
        """Sends any weighted mix of several requests (--request ... more than once)."""
        return self in (Generator.WRK, Generator.VEGETA, Generator.REPLAY)

    def can_send(self, mix: Sequence[_Request], at_a_rate: bool = False) -> bool:
        """Sends every request of `mix` in proportion to its weight: wrk and vegeta any mix; oha any
        mix at an offered rate (one process per kind of request, each at its weight's share of the
        rate: loadgen/oha.py's request_shapes) and, closed loop, one whose requests differ only in
        path (a URL file, one line per unit of weight, from which it draws each request's URL at
        random); ab one request."""
        if len(mix) <= 1 or self.sends_a_mix:
            return True
        return self is Generator.OHA and (at_a_rate or differ_only_in_path(mix))

    @property
    def runs_to_a_count(self) -> bool:
        """Takes --requests: a window of N requests lasts as long as the stack takes to answer them."""
        return self is Generator.AB

    @property
    def on_several_hosts(self) -> bool:
        """Runs on the generator hosts of --hosts or the netns rig."""
        return self is Generator.WRK


GENERATOR_NAMES = tuple(g.value for g in Generator)
CHOSEN_GENERATORS = tuple(g.value for g in Generator if not g.replays and not g.shapes_only and not g.by_protocol)
"""What --generator, a config file and the environment may name: replay is chosen by
`app --replay`, h2load by --protocol, never by name."""
