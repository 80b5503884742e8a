"""docs/layout.md's load-generator recipe, followed by a test: a throwaway generator (wrk under
another name, in this one file) registered in one line, and the places that must then know it.

`generator_recipe_problems` asks each place that derives from the registered classes; a test
that takes one derivation away shows the check notices it.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pywebbench.catalog.workloads import HttpRequest
from pywebbench.commands.arguments import build_parser
from pywebbench.commands.common import options_and_knobs
from pywebbench.core.errors import UserError
from pywebbench.loadgen.base import LoadRequest
from pywebbench.loadgen.registry import GENERATORS, register_generator, unregister_generator, window_generator
from pywebbench.loadgen.wrk import Wrk
from pywebbench.plan.generators import CHOSEN_GENERATORS, Capabilities, ChosenBy, Generator, declared
from pywebbench.plan.options import RunOptions
from pywebbench.results.model import LoadResult
from pywebbench.stage import doctor

RECIPE = "wrk-recipe"


class WrkRecipe(Wrk):
    """wrk under another name: what it can do is wrk's, minus being anyone's default."""

    name = RECIPE
    capabilities = dataclasses.replace(
        Wrk.capabilities, default_for=None,
        need=dataclasses.replace(Wrk.capabilities.need, purpose="the recipe test's wrapper of wrk", required=False))

    def run(self, request: LoadRequest, work_dir: Path) -> LoadResult:
        return dataclasses.replace(super().run(request, work_dir), generator=self.name)


@contextmanager
def registered(cls: type[Wrk] = WrkRecipe) -> Iterator[str]:
    """`cls` registered for the block: the one line the recipe asks for, undone after."""
    register_generator(cls)
    try:
        yield cls.name
    finally:
        unregister_generator(cls.name)


def generator_recipe_problems(name: str) -> list[str]:
    """What a registered generator `name` is missing from each place that must know it."""
    problems: list[str] = []
    made = GENERATORS.get(name)
    if made is None or made().name != name:
        problems.append(f"{name}: loadgen/registry.GENERATORS does not make it")
    caps = declared(name)
    if made is None or caps is None or caps != getattr(made, "capabilities", None):
        problems.append(f"{name}: plan/generators does not answer with the class's Capabilities")
        return problems  # the questions below all ask them
    if name not in {r.name for r in doctor.check()}:
        problems.append(f"{name}: stage/doctor.check has no requirement for it")
    if caps.chosen_by is ChosenBy.NAME:
        problems += _named_problems(name, caps)
    return problems


def _named_problems(name: str, caps: Capabilities) -> list[str]:
    """The places a generator chosen by --generator must be in."""
    problems: list[str] = []
    if name not in CHOSEN_GENERATORS:
        problems.append(f"{name}: not among the names --generator takes (plan/generators.CHOSEN_GENERATORS)")
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PYWEBBENCH_") and k != "PYWEBBENCH_CACHE"}
    try:
        args = build_parser().parse_args(["run", "--generator", name, "--stack", "flask:gunicorn-sync"])
        if options_and_knobs(args)[0].generator != name:
            problems.append(f"{name}: `run --generator {name}` does not choose it")
    except (UserError, SystemExit) as exc:
        problems.append(f"{name}: `run --generator {name}` is refused: {exc}")
    finally:
        os.environ.update(saved)
    generator = Generator(name)
    if generator.open_loop != caps.open_loop or generator.runs_to_a_count != caps.fixed_count \
            or generator.on_several_hosts != caps.remote_hosts:
        problems.append(f"{name}: plan/generators.Generator's questions disagree with its Capabilities")
    one = LoadRequest(url="http://127.0.0.1:1/", connections=1, duration_s=1.0, mix=(HttpRequest("GET", "/"),),
                      rate=None if caps.closed_loop else 100.0)
    if window_generator(name, one) != name:
        problems.append(f"{name}: loadgen/registry.window_generator sends a one-request window elsewhere")
    if list(RunOptions(generator=name).problems()):  # type: ignore[arg-type]
        problems.append(f"{name}: plan/options.RunOptions refuses it")
    return problems
