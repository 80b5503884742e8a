"""The knobs whose values are words, not numbers: `python` (an interpreter), `pin` (a package's
version or source) and `protocol` (catalog/protocols.py). Each value is read and normalised by its own grammar, so a typo is refused
before anything starts and the same value always gets the same trial id. A knob's declaration
(plan/knob_declarations.py) names its grammar."""

from __future__ import annotations

from collections.abc import Callable

from pywebbench.catalog.protocols import parse_protocol
from pywebbench.core.errors import UserError
from pywebbench.plan.interpreter_names import parse_python
from pywebbench.plan.pins import parse_pin, split_values

TextGrammar = tuple[Callable[[str], list[str]], Callable[[str], str]]
"""How a list of values splits, and one value read and normalised (a UserError if it is not one)."""

PYTHON: TextGrammar = (lambda text: text.split(","), lambda item: parse_python(item).text)
PIN: TextGrammar = (split_values, lambda item: parse_pin(item).text)
PROTOCOL: TextGrammar = (lambda text: text.split(","), lambda item: parse_protocol(item).value)


def text_values(name: str, grammar: TextGrammar, text: str) -> tuple[str, ...]:
    """A text knob's values in order, each once."""
    split, read = grammar
    values = []
    for item in split(text):
        if not item.strip():
            raise UserError(f"{name}: empty value in {text!r}")
        values.append(read(item))
    return tuple(dict.fromkeys(values))
