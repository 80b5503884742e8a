"""Every committed page under docs/ is what its committed results render to today."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages import PAGES, build, stale

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_committed_page_rebuilds_byte_for_byte_from_its_results() -> None:
    assert [p.name for p in build(DOCS)] == list(PAGES)
    assert stale(DOCS) == [], "run scripts/docs and commit the pages"


def test_a_page_that_differs_from_its_results_is_named(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    assert stale(tmp_path) == [tmp_path / name for name in PAGES]  # not written yet
    for path, text in build(tmp_path).items():
        path.write_text(text)
    assert stale(tmp_path) == []
    first = tmp_path / next(iter(PAGES))
    first.write_text(first.read_text() + "edited by hand\n")
    assert stale(tmp_path) == [first]
