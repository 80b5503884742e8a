"""The knobs whose values are words, not numbers: `python` (an interpreter), `pin` (a package's
version or source) and `protocol` (catalog/protocols.py). Each value is read and normalised by its own grammar, so a typo is refused
before anything starts and the same value always gets the same trial id."""

from __future__ import annotations

from collections.abc import Callable

from pywebbench.catalog.protocols import parse_protocol
from pywebbench.core.errors import UserError
from pywebbench.plan.interpreter_names import parse_python
from pywebbench.plan.pins import parse_pin, split_values

READERS: dict[str, tuple[Callable[[str], list[str]], Callable[[str], str]]] = {
    # name: (how a list splits, one value normalised)
    "python": (lambda text: text.split(","), lambda item: parse_python(item).text),
    "pin": (split_values, lambda item: parse_pin(item).text),
    "protocol": (lambda text: text.split(","), lambda item: parse_protocol(item).value),
}


def text_values(name: str, text: str) -> tuple[str, ...]:
    """A text knob's values in order, each once."""
    split, read = READERS[name]
    values = []
    for item in split(text):
        if not item.strip():
            raise UserError(f"{name}: empty value in {text!r}")
        values.append(read(item))
    return tuple(dict.fromkeys(values))
