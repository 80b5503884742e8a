"""The load generators a run can use, and what each supports; the checks ask these, not names.

Each generator declares what it can do in its own loadgen module (a `Capabilities` class
attribute) and loadgen/registry.py registers it in one line, which also declares it here. The
plan sits below loadgen (tests/unit/test_layout.py), so it cannot import the classes: it asks
this table of declared capabilities instead, which the first question fills by loading the
registry by name (`_table`), as a plugin is loaded.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Protocol as TypingProtocol, overload

from pywebbench.catalog.protocols import Protocol


class _Request(TypingProtocol):
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


class Mixes(StrEnum):
    """Which mixes of several requests (--request more than once) a generator sends."""
    ONE = "one request"
    PATHS = "any at a rate; closed loop, requests that differ only in path"
    ANY = "any weighted mix"


class ChosenBy(StrEnum):
    """How a run comes to use the generator."""
    NAME = "--generator"
    REPLAY = "app --from-log --replay"  # a recorded log's arrivals, and nothing else
    SHAPE = "a connection shape's driver"  # idle, sse, ws-echo (catalog/shapes), and nothing else
    PROTOCOL = "--protocol"  # the protocols other than h1


class Loop(StrEnum):
    CLOSED = "closed"
    OPEN = "open"


@dataclass(frozen=True)
class Need:
    """What doctor checks for the generator: `binary` located (stage/tools.locate), else `fix`."""
    binary: str
    purpose: str
    fix: str
    required: bool = False
    detail: str | None = None
    """Shown when found, in place of the binary's path (a generator built from `binary`'s sources)."""
    missing: str = "not found"


def built_with_go(purpose: str) -> Need:
    """A generator built from the Go reference's sources on first use: doctor checks for go."""
    return Need("go", purpose, "sudo apt-get install -y golang-go", detail="built with the Go reference",
                missing="needs go")


@dataclass(frozen=True)
class Capabilities:
    closed_loop: bool
    open_loop: bool
    """Keeps an offered rate (--rate, --slo), its latencies free of coordinated omission."""
    mixes: Mixes
    fixed_count: bool
    """Takes --requests: a window of N requests lasts as long as the stack takes to answer them."""
    protocols: frozenset[Protocol]
    remote_hosts: bool
    """Runs on the generator hosts of --hosts or the netns rig."""
    need: Need
    chosen_by: ChosenBy = ChosenBy.NAME
    default_for: Loop | None = None
    """The generator a window of this loop goes to when the run's cannot send it (one of each)."""
    mean_has_omission_samples: bool = False
    """Its mean latency includes samples it adds for coordinated omission (wrk), so Little's law
    bounds its in-flight count from below only."""


_DECLARED: dict[str, Capabilities] = {}
_REGISTRY = "pywebbench.loadgen.registry"


def _table() -> dict[str, Capabilities]:
    """The declared capabilities, the registry loaded first if nothing has imported it yet (a
    plan-only caller, say). Loaded by name, not imported: the plan never depends on loadgen's
    code, only on what its classes declare; and importing the package stays light (the remote
    roles run it on a bare python3)."""
    if _REGISTRY not in sys.modules:
        importlib.import_module(_REGISTRY)
    return _DECLARED


def declare(name: str, capabilities: Capabilities) -> None:
    """Called by loadgen/registry.register_generator; the plan's questions read it."""
    _DECLARED[name] = capabilities


def forget(name: str) -> None:
    _DECLARED.pop(name, None)


def declared(name: str) -> Capabilities | None:
    """The capabilities `name` declared, or None (a name from an old results file, say)."""
    return _table().get(name)


class Generator(str):
    """A registered generator's name, whose properties ask what it declared."""

    __slots__ = ()

    @property
    def capabilities(self) -> Capabilities:
        found = _table().get(str(self))
        if found is None:
            raise ValueError(f"{str(self)!r} is no registered load generator")
        return found

    @property
    def value(self) -> str:
        return str(self)

    @property
    def open_loop(self) -> bool:
        """Keeps an offered rate (--rate, --slo), its latencies free of coordinated omission."""
        return self.capabilities.open_loop

    @property
    def shapes_only(self) -> bool:
        """Sends the connection shapes no HTTP generator sends (idle, sse, ws-echo: catalog/shapes),
        and nothing else; a window of such a shape goes to it whatever the run's generator."""
        return self.capabilities.chosen_by is ChosenBy.SHAPE

    @property
    def by_protocol(self) -> bool:
        """Sends the protocols other than h1 (h2c, h1-tls, h2-tls: catalog/protocols.py), closed loop,
        and is chosen by --protocol, never by name; an h1 window goes to another generator."""
        return self.capabilities.chosen_by is ChosenBy.PROTOCOL

    @property
    def replays(self) -> bool:
        """Sends a recorded log's arrivals at their own times (`app --from-log ... --replay`), and
        nothing else: a window without a recording goes to another generator."""
        return self.capabilities.chosen_by is ChosenBy.REPLAY

    @classmethod
    def open_loop_names(cls) -> str:
        """The open-loop generators, for a message that asks for one: 'oha or vegeta'."""
        return " or ".join(n for n in CHOSEN_GENERATORS if Generator(n).open_loop)

    @property
    def sends_a_mix(self) -> bool:
        """Sends any weighted mix of several requests (--request ... more than once)."""
        return self.capabilities.mixes is Mixes.ANY

    def can_send(self, mix: Sequence[_Request], at_a_rate: bool = False) -> bool:
        """Sends every request of `mix` in proportion to its weight: Mixes.ANY any mix; Mixes.PATHS
        (oha) any mix at an offered rate (one process per kind of request, each at its weight's
        share of the rate: loadgen/oha.py's request_shapes) and, closed loop, one whose requests
        differ only in path (a URL file from which it draws each request's URL at random);
        Mixes.ONE (ab) one request."""
        if len(mix) <= 1 or self.sends_a_mix:
            return True
        return self.capabilities.mixes is Mixes.PATHS and (at_a_rate or differ_only_in_path(mix))

    @property
    def runs_to_a_count(self) -> bool:
        """Takes --requests: a window of N requests lasts as long as the stack takes to answer them."""
        return self.capabilities.fixed_count

    @property
    def on_several_hosts(self) -> bool:
        """Runs on the generator hosts of --hosts or the netns rig."""
        return self.capabilities.remote_hosts


def default_generator(loop: Loop) -> Generator:
    """The generator that declared itself the default of `loop`: a window of that loop goes to it
    when the run's cannot send it; the closed-loop one is --generator's default."""
    return next(Generator(n) for n, c in _table().items() if c.default_for is loop)


def chosen_by(how: ChosenBy) -> Generator:
    """The generator a run uses `how` (the replaying one, the shapes' driver, the protocols')."""
    return next(Generator(n) for n, c in _table().items() if c.chosen_by is how)


def mean_has_omission_samples(name: str) -> bool:
    found = _table().get(name)
    return found is not None and found.mean_has_omission_samples


class _Names(Sequence[str]):
    """The registered names, read when asked: a generator registered at runtime is in them."""

    def __init__(self, chosen_only: bool) -> None:
        self._chosen_only = chosen_only

    def _names(self) -> tuple[str, ...]:
        return tuple(n for n, c in _table().items() if not self._chosen_only or c.chosen_by is ChosenBy.NAME)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._names()[index]

    def __len__(self) -> int:
        return len(self._names())

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __contains__(self, name: object) -> bool:
        return name in self._names()

    def __repr__(self) -> str:
        return repr(self._names())


GENERATOR_NAMES: Sequence[str] = _Names(chosen_only=False)
CHOSEN_GENERATORS: Sequence[str] = _Names(chosen_only=True)
"""What --generator, a config file and the environment may name: replay is chosen by
`app --replay`, h2load by --protocol, shapes by a connection shape, never by name."""
