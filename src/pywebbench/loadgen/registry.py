"""Generators by name, so options and the CLI can name one without importing it."""

from __future__ import annotations

from pywebbench.errors import UserError
from pywebbench.loadgen.ab import ApacheBench
from pywebbench.loadgen.base import LoadGenerator
from pywebbench.loadgen.oha import Oha
from pywebbench.loadgen.wrk import Wrk

GENERATORS: dict[str, type[Wrk] | type[ApacheBench] | type[Oha]] = {"wrk": Wrk, "ab": ApacheBench, "oha": Oha}


def make_generator(name: str) -> LoadGenerator:
    try:
        return GENERATORS[name]()
    except KeyError:
        raise UserError(f"unknown load generator {name!r}; choose from {', '.join(GENERATORS)}") from None
