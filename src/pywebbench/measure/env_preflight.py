"""Before a run starts anything: every interpreter its windows ask for is on this machine and
every pin names something that exists (a git ref, a checkout), each refusal one line."""

from __future__ import annotations

from collections.abc import Sequence

from pywebbench.core.errors import UserError
from pywebbench.results.model import TrialSpec
from pywebbench.stage.interpreters import resolve
from pywebbench.stage.pinning import exact


def environment_problems(trials: Sequence[TrialSpec], placed: bool) -> list[str]:
    pythons = sorted({t.python for t in trials if t.python})
    pins = sorted({t.pin for t in trials if t.pin})
    if (pythons or pins) and placed:
        return ["--python and --pin (and their knobs) build each stack's environment on this machine: "
                "not with --hosts or --topology netns"]
    problems = []
    for text in pythons:
        try:
            resolve(text)
        except UserError as exc:
            problems.append(str(exc))
    for text in pins:
        try:
            exact(text)
        except UserError as exc:
            problems.append(str(exc))
    return problems
