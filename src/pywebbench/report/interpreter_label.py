"""The interpreter a row's server ran, as the tables say it: '3.11.7', 'pypy3.9.16', '3.14.7t GIL
off'; a free-threaded build whose worker re-enabled the GIL is never called free-threaded:
'3.14.7 GIL re-enabled'."""

from __future__ import annotations

import re
from collections.abc import Sequence

from pywebbench.analyze.rows import Row
from pywebbench.results.model import StackInfo


def interpreter_label(stack: StackInfo) -> str:
    text = stack.interpreter
    if not text:
        return "-"
    match = re.match(r"(?P<impl>\S+) (?P<version>\S+) \(", text)
    embedded = re.search(r"libpython(\d+\.\d+t?)", text) if match is None else None
    if match is not None:
        name = f"pypy{match['version']}" if match["impl"].lower() == "pypy" else match["version"]
    elif embedded is not None:  # a server embedding Python (uWSGI): the libpython it mapped
        name = embedded.group(1)
    else:
        return text
    suffix = " embedded" if embedded is not None else ""
    if stack.gil == "on":
        return f"{name.removesuffix('t')}{suffix} GIL re-enabled"
    if name.endswith("t"):
        return f"{name}{suffix} GIL {'off' if stack.gil == 'off' else 'not asked'}"
    return name + suffix


def shows_interpreter(rows: Sequence[Row]) -> bool:
    """The column belongs in a table that asked for an interpreter or ran a free-threaded build."""
    return any(r.spec.python is not None or r.stack.gil is not None for r in rows)
