"""Pages under docs/, each rendered from results committed under docs/results/.

A page is one module with `render(results_dir) -> str` and one line in PAGES. `scripts/docs`
writes them; a test checks that every committed page is what its results render to today.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.report.pages import method, seeds

PAGES: dict[str, Callable[[Path], str]] = {
    "method.md": method.render,
    "seeds.md": seeds.render_index,
    **seeds.PAGES,
}
"""docs/<name> -> its renderer, given docs/results."""


def build(docs: Path) -> dict[Path, str]:
    """Every page's path and text, rendered from docs/results."""
    return {docs / name: render(docs / "results") for name, render in PAGES.items()}


def stale(docs: Path) -> list[Path]:
    """Committed pages that differ from what their results render to today."""
    return [path for path, text in build(docs).items()
            if not path.exists() or path.read_text() != text]
