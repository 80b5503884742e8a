"""The "machine and commands" list of a page made by a script of parts (connections, containers,
interpreters): each part's command, exit, wall time, commit and machine, from its run.json and
results header."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pywebbench.report.markdown import escape
from pywebbench.results.model import MachineInfo


def machine_and_commands(parts: Iterable[tuple[str, dict[str, Any], MachineInfo]]) -> str:
    """One bullet per (part name, its run.json, its results' machine)."""
    lines = ["## The machine and the commands", ""]
    for name, run, m in parts:
        wall = int(run.get("wall_s", 0))
        lines.append(f"- **{name}**: `{escape(str(run.get('command', '?')))}` (exit {run.get('exit', '?')}, "
                     f"{wall // 60} min {wall % 60:02d} s, at {escape(str(run.get('commit', '?')))} on "
                     f"{escape(str(run.get('started_at', '?')))}; {escape(m.cpu_model)}, {m.cpu_count} CPUs, "
                     f"{m.memory_mb:,} MiB, kernel {escape(m.kernel)})")
    return "\n".join(lines)
