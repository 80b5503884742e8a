"""What a `python` knob value asks for: a version (3.11, 3.11.7), a free-threaded build (3.14t), an
implementation (pypy3, pypy3.9, cpython3.12) or a path to an interpreter. Read here, found on
this machine by stage/interpreters.py (which needs no knob grammar, and the plan no machine)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError

CPYTHON, PYPY = "cpython", "pypy"
_WORD = re.compile(r"^(?P<impl>cpython|python|pypy|py)?(?P<version>\d+(?:\.\d+){0,2})?(?P<t>t)?$")


@dataclass(frozen=True)
class PythonWant:
    text: str
    """As recorded and shown: the value normalised ('pypy3', '3.14t', '/opt/py/bin/python3')."""
    implementation: str = CPYTHON
    version: tuple[int, ...] = ()
    """The leading parts of the version it must have: (3, 11) matches 3.11.7; () any."""
    free_threaded: bool = False
    path: str | None = None
    """An interpreter named by its path: used as it is, whatever it reports."""

    def matches(self, implementation: str, version: tuple[int, ...], free_threaded: bool) -> bool:
        """Whether an interpreter that reports these is one this value asks for."""
        return (implementation == self.implementation and version[:len(self.version)] == self.version
                and free_threaded == self.free_threaded)


def parse_python(text: str) -> PythonWant:
    """The value, or a one-line refusal saying the three forms."""
    raw = text.strip()
    if raw.startswith(("/", "~", "./", "../")):
        return PythonWant(str(Path(raw).expanduser()), path=str(Path(raw).expanduser()))
    match = _WORD.match(raw.lower())
    if not raw or match is None or (not match["version"] and match["impl"] != PYPY):  # CPython: which version
        raise UserError(f"python: {raw!r} is not an interpreter: give a version (3.12, 3.14t), an implementation "
                        "(pypy3, pypy3.9) or a path (/usr/bin/python3.11)")
    implementation = PYPY if match["impl"] == PYPY else CPYTHON
    version = tuple(int(p) for p in match["version"].split(".")) if match["version"] else ()
    if implementation == PYPY and match["t"]:
        raise UserError(f"python: {raw!r}: PyPy has no free-threaded build")
    prefix = PYPY if implementation == PYPY else ""
    return PythonWant(f"{prefix}{match['version'] or ''}{match['t'] or ''}", implementation, version,
                      bool(match["t"]))
