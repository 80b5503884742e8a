"""Generators by name, so options and the CLI can name one without importing it, and which
generator sends each window."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.errors import UserError
from pywebbench.loadgen.ab import ApacheBench
from pywebbench.loadgen.base import LoadGenerator, LoadRequest
from pywebbench.loadgen.oha import Oha
from pywebbench.loadgen.vegeta import Vegeta, vegeta_binary
from pywebbench.loadgen.wrk import Wrk
from pywebbench.plan.generators import Generator
from pywebbench.results.model import LoadResult

GENERATORS: dict[str, Callable[[], LoadGenerator]] = {"wrk": Wrk, "ab": ApacheBench, "oha": Oha, "vegeta": Vegeta}


def make_generator(name: str) -> LoadGenerator:
    try:
        return GENERATORS[name]()
    except KeyError:
        raise UserError(f"unknown load generator {name!r}; choose from {', '.join(GENERATORS)}") from None


def window_generator(configured: str, request: LoadRequest) -> str:
    """The generator that sends `request`, the run's being `configured`.

    An offered rate with a mix of several requests goes to vegeta (oha sends one request and
    wrk has no fixed rate); an offered rate with one request to the run's open-loop generator
    (oha unless vegeta was asked for: oha is the lighter and better tested of the two).
    Without a rate, the run's generator, except that a mix it cannot send (oha's, ab's) goes to wrk.
    """
    several, chosen = len(request.mix) > 1, Generator(configured)
    if request.rate is not None:
        if several:
            return Generator.VEGETA
        return configured if chosen.open_loop else Generator.OHA
    if several and not chosen.sends_a_mix:
        return Generator.WRK
    return configured


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
        """vegeta's version in an open-loop run that does not name it: it sends any mix there."""
        if self.name == "oha" and vegeta_binary() is not None:
            return {"vegeta": self.generator("vegeta").version()}
        return {}

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        return self.for_request(request).run(request, work_dir)
