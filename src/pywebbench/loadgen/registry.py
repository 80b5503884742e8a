"""Generators by name, so options and the CLI can name one without importing it, and which
generator sends each window.

A generator is one loadgen module with one class: its `name`, its `capabilities` (what it can
do: plan/generators.Capabilities) and how it runs (`version`, `run`). Registering it is one
line below; nothing else names it: the plan, doctor and the CLI ask the registered classes.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from pywebbench.core.errors import UserError
from pywebbench.loadgen.ab import ApacheBench
from pywebbench.catalog.protocols import Protocol
from pywebbench.loadgen.base import LoadGenerator, LoadRequest
from pywebbench.loadgen.h2load import H2load
from pywebbench.loadgen.oha import Oha
from pywebbench.loadgen.replay import Replay
from pywebbench.loadgen.shapes import Shapes
from pywebbench.loadgen.vegeta import Vegeta
from pywebbench.loadgen.wrk import Wrk
from pywebbench.plan.generators import ChosenBy, Generator, Loop, chosen_by, declare, default_generator, forget
from pywebbench.results.model import LoadResult
from pywebbench.stage.tools import locate


GENERATORS: dict[str, Callable[[], LoadGenerator]] = {}


def register_generator(cls: type[Any]) -> None:
    """Make `cls` (its `name`, its `capabilities`, built with no argument) a generator that runs,
    doctor and --generator know by its name."""
    GENERATORS[cls.name] = cls
    declare(cls.name, cls.capabilities)


register_generator(Wrk)
register_generator(ApacheBench)
register_generator(Oha)
register_generator(Vegeta)
register_generator(Replay)
register_generator(Shapes)
register_generator(H2load)


def unregister_generator(name: str) -> None:
    """Undo register_generator (a test's throwaway generator)."""
    GENERATORS.pop(name, None)
    forget(name)


def make_generator(name: str) -> LoadGenerator:
    try:
        return GENERATORS[name]()
    except KeyError:
        raise UserError(f"unknown load generator {name!r}; choose from {', '.join(GENERATORS)}") from None


def window_generator(configured: str, request: LoadRequest) -> str:
    """The generator that sends `request`, the run's being `configured`.

    The run's generator when it can send the window's mix (and keep its offered rate, if it has
    one). Otherwise, at an offered rate, the default open-loop generator (oha), which sends any
    mix open loop (one process per kind of request) and is the lighter open-loop generator (its
    ceiling here is wrk's, vegeta's about 60% of it: docs/results/vegeta/); without a rate, the
    default closed-loop one (wrk), which sends any mix. A window that plays a recorded log's
    arrivals (`request.schedule`) goes to the replaying generator, which sends nothing else; so
    does a connection shape with a Go driver (`request.drive`) go to the shapes' driver, and a
    window in a protocol other than h1 to the protocols' (h2load; plan/protocol_plan.py refuses
    what it cannot send).
    """
    chosen = Generator(configured)
    rated = request.rate is not None
    fallback = default_generator(Loop.OPEN if rated else Loop.CLOSED)
    if request.schedule is not None:
        return chosen_by(ChosenBy.REPLAY)
    if request.drive is not None and request.drive.command is not None:
        return chosen_by(ChosenBy.SHAPE)  # a connection shape's own driver (catalog/shapes)
    if request.protocol is not Protocol.H1:
        return chosen_by(ChosenBy.PROTOCOL)
    if chosen.replays or chosen.shapes_only or chosen.by_protocol:
        return fallback
    if chosen.can_send(request.mix, at_a_rate=rated) and (not rated or chosen.open_loop):
        return configured
    return fallback


class ByWindow:
    """The run's generator as the runner sees it: each window to `window_generator`'s choice.

    Its name and version are the configured generator's (the results header); the others it
    may use are in `other_versions`, and every trial's load names the generator that sent it.
    """

    def __init__(self, configured: str) -> None:
        make_generator(configured)  # an unknown name fails here, not at the first window
        self.name = configured
        self._made: dict[str, LoadGenerator] = {}

    def generator(self, name: str) -> LoadGenerator:
        if name not in self._made:
            self._made[name] = make_generator(name)
        return self._made[name]

    def for_request(self, request: LoadRequest) -> LoadGenerator:
        return self.generator(window_generator(self.name, request))

    def version(self) -> str:
        return self.generator(self.name).version()

    def other_versions(self) -> dict[str, str]:
        """The open-loop generators a window may go to besides the configured one (an offered rate
        or a mix the configured one cannot send), where they are installed."""
        found = (Generator(n) for n in GENERATORS if n != self.name)
        return {g.value: self.generator(g).version() for g in found
                if g.open_loop and not g.replays and locate(g.capabilities.need.binary) is not None}

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        return self.for_request(request).run(request, work_dir)
