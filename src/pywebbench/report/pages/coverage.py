"""docs/method.md's coverage section: how often a nominal 95% ratio interval covers the truth,
per shape, from docs/results/coverage/coverage.json (written by scripts/coverage)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

LOW, HIGH = 0.93, 0.97


def _cell(cell: dict[str, Any]) -> str:
    if not cell["intervals"]:
        return "needs 2 launches"
    coverage = cell["covered"] / cell["intervals"]
    mark = "" if LOW <= coverage <= HIGH else " (!)"
    return f"{coverage:.1%} ±{cell['median_half_width']:.0%}{mark}"


def section(results: Path) -> str:
    path = results / "coverage" / "coverage.json"
    if not path.exists():
        return "No coverage grid committed yet (`scripts/coverage`)."
    data = json.loads(path.read_text())
    cells = data["cells"]
    stacks = sorted({c["stacks"] for c in cells})
    shapes = sorted({(c["launches"], c["rounds"]) for c in cells})
    by = {(c["launches"], c["rounds"], c["stacks"]): c for c in cells}
    head = "| launches x rounds | " + " | ".join(f"{s} stacks" for s in stacks) + " |"
    lines = [head, "|---|" + "---|" * len(stacks)]
    for launches, rounds in shapes:
        lines.append(f"| {launches} x {rounds} | "
                     + " | ".join(_cell(by[(launches, rounds, s)]) for s in stacks) + " |")
    rated = [c["covered"] / c["intervals"] for c in cells if c["intervals"]]
    inside = sum(LOW <= c <= HIGH for c in rated)
    noise = data["noise"]
    return f"""\
Each cell simulates runs of known truth at one shape (launches x rounds per launch, and stacks
including the baseline), {min(c["runs"] for c in cells):,}-{max(c["runs"] for c in cells):,} runs
per cell, and counts how often the interval each ratio gets covers its true value; beside it,
the median half-width. The noise follows the committed calibrations: a launch effect of
{noise["launch_sd"]:.0%} (sd), a window's noise of {noise["round_sd"]:.0%} with Student-t tails
({noise["tail_df"]:g} df) and an outlier window in {1 / noise["outlier_rate"]:.0f} cut to
{noise["outlier_factor"]:.0%}, a machine's speed of {noise["machine_sd"]:.0%} per round that
each stack answers with its own sensitivity ({noise["sensitivity_sd"]:.0%}), stacks noisier
than others (lognormal scale, sd {noise["stack_spread"]:g}; one in
{1 / noise["noisy_share"]:.0f} three times as noisy). The interval is Student's t over launch
means, each stack's own spread moderated across its table (`analyze/moderation.py`).

{chr(10).join(lines)}

{inside} of {len(rated)} cells with an interval cover between {LOW:.0%} and {HIGH:.0%}
(lowest {min(rated):.1%}, highest {max(rated):.1%}); one launch gives no interval, and the
table says "needs 2 launches" instead of a range."""
