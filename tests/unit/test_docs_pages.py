"""Every committed page under docs/ is what its committed results render to today."""

from __future__ import annotations

from pathlib import Path

import pytest

from pywebbench.errors import UserError
from pywebbench.report.pages import PAGES, REGIONS, build, stale

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_every_committed_page_rebuilds_byte_for_byte_from_its_results() -> None:
    built = build(DOCS)  # once: rendering every page is most of this test's time
    paths = list(built)
    assert [p.name for p in paths[:len(PAGES)]] == [*PAGES]
    assert [p.relative_to(DOCS.parent).as_posix() for p in paths[len(PAGES):]] == [*REGIONS]
    differ = [path for path, text in built.items() if not path.exists() or path.read_text() != text]
    assert differ == [], "run scripts/docs and commit the pages"


def test_the_readme_region_is_rendered_and_the_rest_of_it_kept(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "results").mkdir(parents=True)
    readme = tmp_path / "README.md"
    readme.write_text("# Hand\n\n<!-- seeds-table:start -->\nold\n<!-- seeds-table:end -->\n\nafter\n"
                      "<!-- calibration-summary:start -->\nstale\n<!-- calibration-summary:end -->\n"
                      "<!-- tuning-example:start -->\ntyped\n<!-- tuning-example:end -->\n"
                      "<!-- gate-series:start -->\n<!-- gate-series:end -->\n"
                      "<!-- coverage-summary:start -->\n94-97% typed\n<!-- coverage-summary:end -->\n"
                      "<!-- allocation-summary:start -->\na little\n<!-- allocation-summary:end -->\n"
                      "<!-- host-noise:start -->\nabout 13%\n<!-- host-noise:end -->\n")
    text = build(docs)[readme]
    assert text.startswith("# Hand\n\n<!-- seeds-table:start -->\n| Seed | What it claimed |")
    assert "](docs/seed-000.md)" in text and "old" not in text and "stale" not in text
    assert "<!-- seeds-table:end -->\n\nafter\n<!-- calibration-summary:start -->\n- **Interleaved**" in text
    assert "No run committed yet." in text  # no calibrate run under this docs/results
    assert "No tuning run committed yet" in text and "typed" not in text
    assert "No gate series committed yet" in text and "No coverage simulation committed yet" in text
    assert "no simulation of adaptive allocation committed yet" in text and "a little" not in text
    assert "`scripts/host-noise` has not been run" in text and "about 13%" not in text
    readme.write_text("# Hand, no markers\n")
    with pytest.raises(UserError, match="no '<!-- tuning-example:start -->'"):
        build(docs)


def test_the_reference_option_table_is_the_declaration() -> None:
    from pywebbench.plan.declared import OPTIONS
    text = (DOCS / "reference.md").read_text()
    table = text[text.index("<!-- options-table:start -->"):text.index("<!-- options-table:end -->")]
    assert all(f"`{o.flag}`" in table for o in OPTIONS)


def test_a_page_that_differs_from_its_results_is_named(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    assert stale(tmp_path) == [tmp_path / name for name in PAGES]  # not written yet
    for path, text in build(tmp_path).items():
        path.write_text(text)
    assert stale(tmp_path) == []
    first = tmp_path / next(iter(PAGES))
    first.write_text(first.read_text() + "edited by hand\n")
    assert stale(tmp_path) == [first]
