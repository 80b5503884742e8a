"""A flag's reader that refuses a bad value without ending the parse, so the command line's every
problem is named at once (plan/declared.py gives each declared option one)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pywebbench.core.errors import UserError


@dataclass(frozen=True)
class Refused:
    """A flag's value its reader refused, kept in place of the value so the command line's every
    problem is named at once (take_refused), not only argparse's first."""

    flag: str
    problem: str


def lenient(flag: str, read: Callable[[str], Any], choices: Sequence[str] | None) -> Callable[[str], Any]:
    """The option's reader, answering a bad value with a Refused instead of ending the parse."""

    def parse(text: str) -> Any:
        try:
            value = read(text)
        except (argparse.ArgumentTypeError, ValueError, UserError) as exc:
            name = getattr(read, "__name__", "")
            return Refused(flag, str(exc) if isinstance(exc, (argparse.ArgumentTypeError, UserError))
                           else f"invalid {name} value: {text!r}")
        if choices and value not in choices:
            return Refused(flag, f"invalid choice: {text!r} (choose from {', '.join(choices)})")
        return value
    return parse


def take_refused(args: argparse.Namespace) -> list[str]:
    """Every refused flag value, one line each, each left as not given so the option layers can
    still name their own problems beside these (commands/common.py joins them)."""
    lines = []
    for name, value in vars(args).items():
        if isinstance(value, Refused):
            lines.append(f"argument {value.flag}: {value.problem}")
            setattr(args, name, None)
    return lines
