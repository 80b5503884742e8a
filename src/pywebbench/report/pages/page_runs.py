"""A page made by a script of parts (connections, containers, interpreters): each part's folder
under docs/results/ holds its results file and run.json (the command, its exit, wall time and
commit), read here once; and the page's "machine and commands" list made from them."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.report.markdown import escape
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results, results_path


@dataclass(frozen=True)
class PagePart:
    run: dict[str, Any]
    """The script's run.json: command, exit, wall_s, started_at, commit."""
    results: ResultSet


def load_part(folder: Path) -> PagePart | None:
    """The part kept in `folder`; None where the script has not made it yet."""
    if not (folder / "run.json").exists() or not results_path(folder).exists():
        return None
    return PagePart(json.loads((folder / "run.json").read_text()), load_results(folder))


def machine_and_commands(parts: Mapping[str, PagePart | None]) -> str:
    """One bullet per measured part: its command, exit, wall time, commit and machine."""
    lines = ["## The machine and the commands", ""]
    for name, part in parts.items():
        if part is None:
            continue
        run, m = part.run, part.results.header.machine
        wall = int(run.get("wall_s", 0))
        lines.append(f"- **{name}**: `{escape(str(run.get('command', '?')))}` (exit {run.get('exit', '?')}, "
                     f"{wall // 60} min {wall % 60:02d} s, at {escape(str(run.get('commit', '?')))} on "
                     f"{escape(str(run.get('started_at', '?')))}; {escape(m.cpu_model)}, {m.cpu_count} CPUs, "
                     f"{m.memory_mb:,} MiB, kernel {escape(m.kernel)})")
    return "\n".join(lines)
