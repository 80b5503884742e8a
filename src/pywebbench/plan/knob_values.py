"""A recorded knob's value by the knob's declared name, read through its declaration.

Code that shows or groups what a cell recorded (report titles, the seed pages, a claim's grid
point) asks here instead of naming the TrialSpec or Cell field itself, so the field's name
stays in its declaration and in the code that applies it (tests/unit/test_option_names.py).
A run option no `--knob` sweeps (the window's length) is read through its `Option` the same way.
"""

from __future__ import annotations

from typing import Any

from pywebbench.plan.declared import OPTIONS
from pywebbench.plan.knob_declarations import declared_knob, declared_knobs
from pywebbench.plan.options import RunOptions
from pywebbench.results.model import Cell, TrialSpec

__all__ = ["knob_value", "knob_values", "knob_words", "option_value", "window_seconds"]


def knob_value(recorded: TrialSpec | Cell, name: str) -> Any:
    """What `recorded` holds for the knob declared as `name` (Knob.setting: its field, or its entry
    in `knobs`); None when no knob has that name (a Cell holds stack_cpus as a count, a TrialSpec
    as the CPUs)."""
    knob = declared_knob(name)
    return None if knob is None else knob.setting(recorded)


def knob_values(recorded: TrialSpec | Cell) -> dict[str, Any]:
    """Every declared knob's name and the value `recorded` holds for it (Knob.setting)."""
    return {knob.name: knob.setting(recorded) for knob in declared_knobs()}


def knob_words(recorded: TrialSpec | Cell, name: str) -> str | None:
    """The knob declared as `name` in its declared words ("100 connections"); None when unset."""
    knob = declared_knob(name)
    value = None if knob is None else knob.setting(recorded)
    return None if knob is None or value is None else knob.words(value)


def option_value(recorded: TrialSpec | RunOptions, flag: str) -> Any:
    """What `recorded` holds for the run option declared with `flag` ("--duration"), for the
    options no `--knob` sweeps: read through the option's declaration, as a knob's is."""
    option = next(o for o in OPTIONS if o.flag == flag)
    return getattr(recorded, option.field)


def window_seconds(recorded: TrialSpec | RunOptions) -> float:
    """A window's length in seconds (`--duration`), typed, for the places that show or budget it."""
    return float(option_value(recorded, "--duration"))
