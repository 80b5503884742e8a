"""Why a stack's environment cannot be had on an interpreter, in one line for the table
('psycopg-binary 3.3.9: no build for cp314t', 'gunicorn==27.0.1: needs Python>=3.10, this is
3.9.16'), read from what uv and the server said; the whole message stays in the results."""

from __future__ import annotations

import re

_NEEDS_PYTHON = re.compile(r"current Python version \((?P<have>[^)]+)\) does not satisfy (?P<need>Python[^ ]+) and "
                           r"(?P<what>\S+) depends on")
_NO_WHEEL = re.compile(r"only found wheels for `(?P<name>[^`]+)` \(v(?P<version>[^)]+)\)")
_NO_WHEEL_TAG = re.compile(r"You require [^(]*\(`(?P<tag>[^`]+)`\)")
_NO_WHEEL_PLAIN = re.compile(r"(?P<what>\S+) has no wheels with a (?P<kind>[a-z -]+) (?:ABI|platform) tag")
_FAILED_BUILD = re.compile(r"Failed to build `(?P<what>[^`]+)`")
_IMPORT = re.compile(r"^\s*(?P<error>(?:ModuleNotFoundError|ImportError|OSError|AttributeError|SyntaxError): .+)$", re.M)
_UNKNOWN_FLAG = re.compile(r"(?:error: unrecognized arguments:|Error: No such option:|error: no such option:)\s*"
                           r"(?P<flag>[^\n]+)")
MAX = 120


def install_problem(message: str) -> str:
    """One line for an environment that did not build."""
    if (found := _NEEDS_PYTHON.search(message)) is not None:
        return f"{found['what']}: needs {found['need']}, this is {found['have']}"
    if (wheel := _NO_WHEEL.search(message)) is not None:
        tag = _NO_WHEEL_TAG.search(message)
        return f"{wheel['name']} {wheel['version']}: no build for {tag['tag'] if tag else 'this interpreter'}"
    if (plain := _NO_WHEEL_PLAIN.search(message)) is not None:
        return f"{plain['what']}: no build for this interpreter ({plain['kind']} tag)"
    if (failed := _FAILED_BUILD.search(message)) is not None:
        return f"{failed['what']}: does not build on this interpreter"
    if "meinheld" in message and "failed" in message:  # the harness's own build (stage/patched.py)
        return "meinheld (rebuilt for greenlet 3): does not build on this interpreter"
    return _last_line(message)


def import_problem(log_tail: str) -> str | None:
    """What stopped a server on this interpreter or version, from its log: an import error, or a
    flag of the catalog's command line its version does not take; None when neither is there."""
    found = _IMPORT.findall(log_tail)
    if found:
        return f"does not import: {found[-1].strip()}"[:MAX]
    flag = _UNKNOWN_FLAG.search(log_tail)
    if flag is not None:
        return f"does not take {flag['flag'].strip()} (a flag of the catalog's command line)"[:MAX]
    return None


def _last_line(message: str) -> str:
    parts = [p.strip() for p in re.split(r"\n| \| ", message) if p.strip()]
    useful = [p for p in parts if not p.startswith(("hint:", "help:"))] or parts or ["environment build failed"]
    line = useful[-1]
    return line if len(line) <= MAX else line[:MAX - 3] + "..."
