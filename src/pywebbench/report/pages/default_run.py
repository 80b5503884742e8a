"""The README's first output: what `./scripts/bench` prints, rendered from its run committed under
docs/results/rankings/default-auto/ by the terminal renderer itself, at a fixed width so the page
is the same on every machine that rebuilds it."""

from __future__ import annotations

import shlex
from pathlib import Path

from pywebbench.report.terminal import render_terminal
from pywebbench.results.store import load_results, results_path

RUN = "rankings/default-auto"
"""Under docs/results/: `./scripts/bench`'s command with `--out` naming this folder."""
WIDTH = 100
"""The terminal's width the README shows: fixed, so the page does not depend on who rebuilt it."""


def section(results_dir: Path) -> str:
    """The default run's terminal output in a text fence, and the line saying what made it and when."""
    folder = results_dir / RUN
    if not results_path(folder).exists():
        return f"No default run committed yet (`./scripts/bench --out docs/results/{RUN}` makes it).\n"
    results = load_results(folder)
    output = "\n".join(line.rstrip() for line in render_terminal(results, width=WIDTH).splitlines())
    header = results.header
    return ("```text\n" + output + "\n```\n\n"
            f"Made by `{shlex.join(header.command)}` (what `./scripts/bench` runs, with `--out` added) at "
            f"{header.created_at} on {header.machine.cpu_count} CPUs ({header.machine.cpu_model}); "
            f"`pywebbench report docs/results/{RUN}` prints it again at your terminal's width.\n")
