"""The one exception the CLI turns into a one-line message and a non-zero exit."""

from __future__ import annotations

from collections.abc import Callable


class UserError(Exception):
    """Bad input or a missing prerequisite, detected before any measurement starts.

    One problem per line: a source with several (a config file with two bad values) raises one
    UserError("\\n".join(problems)), and the CLI prints each line as its own error line.
    """

    @property
    def problems(self) -> list[str]:
        """Its problems, one line each."""
        return str(self).splitlines() or [str(self)]


def refusals(check: Callable[[], object]) -> list[str]:
    """A check that raises its refusal, as the lines of what it refused ([] when it passes): so
    every check of a command line can be run and all of its problems named at once."""
    try:
        check()
    except UserError as exc:
        return exc.problems
    return []
