"""A page per seed under docs/ (docs/seed-NNN.md) and the table of them all (docs/seeds.md).

Each seed's module holds its page: which presets it shows, the baseline the seed measured
against, and why CPU per request changes how its table reads. Pages render from the runs
committed under docs/results/seeds/<preset>/ (scripts/seed-runs makes them); a preset not yet
run there shows the seed's figures and the command, never a figure of ours.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.report.pages.seeds import seed000, seed001, seed002, seed003, seed004
from pywebbench.report.pages.seeds.common import SEEDS_DIR

Render = Callable[[Path], str]
Headline = Callable[[Path], tuple[str, str, str]]

SEEDS: tuple[tuple[str, str, Render, Headline], ...] = (
    ("000", seed000.PAGE.title, seed000.render, seed000.headline),
    ("001", seed001.PAGE.title, seed001.render, seed001.PAGE.headline),
    ("002", seed002.PAGE.title, seed002.render, seed002.PAGE.headline),
    ("003", seed003.PAGE.title, seed003.render, seed003.PAGE.headline),
    ("004", seed004.PAGE.title, seed004.render, seed004.PAGE.headline),
)
"""(number, title, page renderer, the seeds table's line) per seed."""

PAGES: dict[str, Render] = {f"seed-{number}.md": render for number, _title, render, _headline in SEEDS}


def render_index(results: Path) -> str:
    """docs/seeds.md: seed, what it claimed, what we measured, agree? (the README links here)."""
    return "\n".join([
        "# The seeds, reproduced",
        "",
        f"<!-- Built by scripts/docs from docs/results/{SEEDS_DIR}/; edit "
        "src/pywebbench/report/pages/seeds/__init__.py, not this file. -->",
        "",
        "Each seed's headline claim in its own words, what this machine measured for it, and whether the two "
        "agree (*agrees*: the same order, ours outside the noise; *tied here*: ours cannot tell the stacks "
        "apart; *differs*: the opposite order, outside the noise). Each page sets every published figure "
        f"beside ours. The runs are made by `scripts/seed-runs` into `docs/results/{SEEDS_DIR}/`; a seed not "
        "yet run there says so, with the command.",
        "",
        *seeds_table(results, ""),
    ]) + "\n"


def seeds_table(results: Path, pages: str) -> list[str]:
    """The table's lines, each seed linked to its page under the `pages` prefix ("docs/" from the README)."""
    lines = ["| Seed | What it claimed | What we measured | Agree? |", "|---|---|---|---|"]
    for number, title, _render, headline in SEEDS:
        claimed, found, agree = headline(results)
        lines.append(f"| [{number}]({pages}seed-{number}.md): {title.split(': ', 1)[-1]} | {claimed} | {found} "
                     f"| {agree} |")
    return lines


def readme_seeds_table(results: Path) -> str:
    """The README's copy of the table (between its seeds-table markers)."""
    return "\n".join(seeds_table(results, "docs/")) + "\n"


__all__ = ["PAGES", "SEEDS", "readme_seeds_table", "render_index", "seeds_table"]
