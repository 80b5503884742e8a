"""The `app` command's answer beside its table: for each server, the command that deploys the
app as it was measured, and what the reader must know (monkey-patching servers).

Read from the results header (`deploy`, `app`), so `report` renders it again from the file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pywebbench.results.model import ResultSet


def deploy_commands(results: ResultSet) -> list[tuple[str, str]]:
    """(stack, command) pairs of an `app` run, in stack order; [] for other runs."""
    stored = results.header.options.get("deploy")
    if not isinstance(stored, Mapping):
        return []
    return sorted((str(label), str(command)) for label, command in stored.items())


def app_notes(results: ResultSet) -> list[str]:
    app: Any = results.header.options.get("app")
    notes = app.get("notes", []) if isinstance(app, Mapping) else []
    return [str(n) for n in notes] if isinstance(notes, list) else []


def render_deploy(deploy: Mapping[str, str], notes: Sequence[str]) -> str:
    """Plain text for the terminal: one stack and its command per line pair."""
    lines = ["Deploy commands (as measured; the app listens on 0.0.0.0:8000):"]
    for label, command in sorted(deploy.items()):
        lines += [f"  {label}", f"    {command}"]
    lines += [f"note: {note}" for note in notes]
    return "\n".join(lines)
