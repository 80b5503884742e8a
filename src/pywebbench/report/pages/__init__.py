"""Pages under docs/, each rendered from results committed under docs/results/.

A page is one module with `render(results_dir) -> str` and one line in PAGES. `scripts/docs`
writes them; a test checks that every committed page is what its results render to today.
A region of a hand-written file (the README's seeds table) is rendered the same way, between
`<!-- NAME:start -->` and `<!-- NAME:end -->` markers; the rest of that file is left alone.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.plan.declared import reference_table
from pywebbench.report.pages import interpreters, maintainer_gates
from pywebbench.report.pages import (catalog, connections, containers, coverage, default_run, gate_series, host_noise,
                                     method, rankings, profiles, readme_tuning, real_apps, real_traffic, seeds)

PAGES: dict[str, Callable[[Path], str]] = {
    "catalog.md": catalog.render,
    "method.md": method.render,
    "rankings.md": rankings.render,
    "profiles.md": profiles.render,
    "real-apps.md": real_apps.render,
    "real-traffic.md": real_traffic.render,
    "connections.md": connections.render,
    "containers.md": containers.render,
    "interpreters.md": interpreters.render,
    "seeds.md": seeds.render_index,
    **seeds.PAGES,
}
"""docs/<name> -> its renderer, given docs/results."""

REGIONS: dict[str, dict[str, Callable[[Path], str]]] = {
    "README.md": {"default-run": default_run.section, "tuning-example": readme_tuning.section,
                  "seeds-table": seeds.readme_seeds_table, "calibration-summary": method.readme_calibration,
                  "gate-series": gate_series.section, "coverage-summary": coverage.readme_summary,
                  "allocation-summary": coverage.readme_allocation, "host-noise": host_noise.readme_line},
    "docs/reference/run.md": {"options-table": lambda results: reference_table()},
    "docs/ci-recipe.md": {"gate-series": gate_series.section, "maintainer-gate-series": maintainer_gates.section},
}
"""A file beside docs/ -> {region name -> its renderer, given docs/results}."""


def build(docs: Path) -> dict[Path, str]:
    """Every page's path and text, rendered from docs/results, and each file with regions
    (where it exists beside docs/) with those regions rendered."""
    pages = {docs / name: render(docs / "results") for name, render in PAGES.items()}
    for name, regions in REGIONS.items():
        path = docs.parent / name
        if path.exists():
            text = path.read_text()
            for region, render in regions.items():
                text = with_region(text, region, render(docs / "results"), path)
            pages[path] = text
    return pages


def with_region(text: str, region: str, body: str, path: Path) -> str:
    """`text` with what lies between the region's markers replaced by `body`."""
    start, end = f"<!-- {region}:start -->\n", f"<!-- {region}:end -->"
    head, found, rest = text.partition(start)
    _old, closed, tail = rest.partition(end)
    if not found or not closed:
        raise UserError(f"{path} has no '{start.strip()}' ... '{end}' region for scripts/docs to fill")
    return head + start + body + end + tail


def stale(docs: Path) -> list[Path]:
    """Committed pages that differ from what their results render to today."""
    return [path for path, text in build(docs).items()
            if not path.exists() or path.read_text() != text]
