"""Knobs in words and in short: the one place a knob's value is turned into text.

`knob_labels` says what sets a cell apart ("query delay 20 ms", "via nginx") for table titles
and notes; `knob_short` is the compact `name=value` of ranking views; `knob_args` writes a
grid back as the `--knob` texts the sweep grammar reads. Each knob's words come from its
declaration (plan/knob_declarations.py), read when called, so a knob declared later is said too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pywebbench.plan.knob_declarations import Kind, cpus_label, declared_knob, declared_knobs, knob_of_field
from pywebbench.plan.limits import format_bytes
from pywebbench.results.model import TrialSpec
from pywebbench.results.server import AUTO_WORKERS

__all__ = ["cpus_label", "knob_args", "knob_labels", "knob_short"]

_WORDS_FIRST = ("rate", "connections", "workers", "threads", "topology", "db_delay_s", "max_db_sessions",
                "db_pool", "upstream_delay_s", "cpu_size", "stack_cpus")
"""The order titles have always read in; fields not listed (every knob declared since) follow in
declaration order."""
_NOT_KNOBS: dict[str, Callable[[Any], str | None]] = {
    "topology": lambda topology: None if topology == "direct" else f"via {topology}",
}
"""What else sets a cell apart, said alike though no `--knob` sweeps it."""


def knob_labels(spec: TrialSpec, omit: Iterable[str] = ()) -> list[str]:
    """The knobs that set this cell apart, in words; `omit` names TrialSpec fields (a field-less
    knob: its name) to leave out (a sweep's own axis)."""
    skip = set(omit)
    knobs = {knob.key: knob for knob in declared_knobs()}
    words: dict[str, Callable[[Any], str | None]] = {**_NOT_KNOBS, **{key: k.words for key, k in knobs.items()}}
    order = [f for f in _WORDS_FIRST if f in words] + [f for f in words if f not in _WORDS_FIRST]
    said = ((key, knobs[key].setting(spec) if key in knobs else getattr(spec, key, None))
            for key in order if key not in skip)
    return [text for key, value in said if value is not None and (text := words[key](value)) is not None]


def knob_short(name: str, value: object) -> str:
    """`db_delay=20ms` for a TrialSpec (or Cell) field and its value (seconds become milliseconds);
    the field-less knobs' `knobs` each as their own `name=value`."""
    if name == "knobs" and isinstance(value, tuple):
        return " ".join(knob_short(n, v) for n, v in value)
    knob = knob_of_field(name)
    if knob is not None and knob.auto and value == AUTO_WORKERS:
        return f"{knob.name}=auto"
    if knob is not None and knob.kind is Kind.BYTES and isinstance(value, int):
        return f"{knob.name}={format_bytes(value)}"
    if knob is not None and knob.kind is Kind.SECONDS and isinstance(value, float):
        return f"{knob.name}={value * 1000:g}ms"
    if isinstance(value, float):
        return f"{name}={value:g}"
    return f"{name}={value}"


def knob_args(grid: Sequence[tuple[str, Sequence[object]]]) -> tuple[str, ...]:
    """A grid as --knob texts, so a resumed preset run rebuilds the same points."""
    return tuple(f"{name}=" + ",".join(_arg(name, v) for v in values) for name, values in grid)


def _arg(name: str, value: object) -> str:
    if (knob := declared_knob(name)) is not None and knob.auto and value == AUTO_WORKERS:
        return "auto"
    return f"{value:g}" if isinstance(value, float) else str(value)
