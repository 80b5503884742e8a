"""Every committed page under docs/ is what its committed results render to today."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.report.pages import PAGES, REGIONS, build, default_run, stale

DOCS = Path(__file__).resolve().parents[2] / "docs"
README = DOCS.parent / "README.md"


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
                      "<!-- default-run:start -->\na table\n<!-- default-run:end -->\n"
                      "<!-- calibration-summary:start -->\nstale\n<!-- calibration-summary:end -->\n"
                      "<!-- tuning-example:start -->\ntyped\n<!-- tuning-example:end -->\n"
                      "<!-- gate-series:start -->\n<!-- gate-series:end -->\n"
                      "<!-- coverage-summary:start -->\n94-97% typed\n<!-- coverage-summary:end -->\n"
                      "<!-- allocation-summary:start -->\na little\n<!-- allocation-summary:end -->\n"
                      "<!-- host-noise:start -->\nabout 13%\n<!-- host-noise:end -->\n")
    text = build(docs)[readme]
    assert text.startswith("# Hand\n\n<!-- seeds-table:start -->\n| Seed | What it claimed |")
    assert "](docs/seed-000.md)" in text and "old" not in text and "stale" not in text
    assert "<!-- seeds-table:end -->\n\nafter\n<!-- default-run:start -->\nNo default run committed yet" in text
    assert "a table" not in text
    assert "<!-- default-run:end -->\n<!-- calibration-summary:start -->\n- **Interleaved**" in text
    assert "No run committed yet." in text  # no calibrate run under this docs/results
    assert "No tuning run committed yet" in text and "typed" not in text
    assert "No gate series committed yet" in text and "No coverage simulation committed yet" in text
    assert "no simulation of adaptive allocation committed yet" in text and "a little" not in text
    assert "`scripts/host-noise` has not been run" in text and "about 13%" not in text
    readme.write_text("# Hand, no markers\n")
    with pytest.raises(UserError, match="no '<!-- default-run:start -->'"):
        build(docs)


def test_the_reference_option_table_is_the_declaration() -> None:
    from pywebbench.plan.declared import OPTIONS
    text = (DOCS / "reference" / "run.md").read_text()
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


def test_the_readme_shows_the_default_run_as_the_terminal_prints_it() -> None:
    from pywebbench.report.terminal import render_terminal
    from pywebbench.results.store import load_results
    results = load_results(DOCS / "results" / default_run.RUN)
    body = default_run.section(DOCS / "results")
    table = render_terminal(results, width=default_run.WIDTH).splitlines()[3]  # the first table's top border
    assert body.startswith("```text\n") and table.rstrip() in body
    assert " ".join(results.header.command) in body and results.header.created_at in body
    readme = README.read_text()
    assert readme.index("<!-- default-run:start -->") < readme.index("## Words")


def _pages() -> list[Path]:
    """Every hand-written or built page under docs/, bar the results' own files."""
    return sorted(p for p in DOCS.rglob("*.md") if "results" not in p.relative_to(DOCS).parts)


def _links(path: Path) -> list[str]:
    """The link targets of a Markdown file, outside fenced code and code spans."""
    text = re.sub(r"(?ms)^```.*?^```", "", path.read_text())
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\)", text)


def _anchors(path: Path) -> set[str]:
    """The anchors GitHub gives a page's headings (duplicates numbered -1, -2, ...)."""
    seen: dict[str, int] = {}
    for heading in re.findall(r"(?m)^#{1,6} +(.+?) *#*$", re.sub(r"(?ms)^```.*?^```", "", path.read_text())):
        slug = re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")
        count = seen.get(slug, 0)
        seen[slug] = count + 1
        if count:
            seen[f"{slug}-{count}"] = 1
    return set(seen)


def test_the_docs_index_links_every_page() -> None:
    index = DOCS / "index.md"
    linked = {(index.parent / target.split("#")[0]).resolve() for target in _links(index)}
    pages = [p for p in _pages() if p.parent in (DOCS, DOCS / "reference") and p != index]
    assert [p.relative_to(DOCS).as_posix() for p in pages if p.resolve() not in linked] == []
    assert "](docs/index.md)" in README.read_text()


def test_every_relative_link_points_at_a_file_that_exists() -> None:
    broken = []
    for page in [README, *_pages()]:
        for target in _links(page):
            if re.match(r"[a-z][a-z0-9+.-]*:", target):
                continue  # https:, mailto:: not a file here
            name, _, anchor = target.partition("#")
            path = (page.parent / name).resolve() if name else page
            if not path.exists():
                broken.append(f"{page.relative_to(DOCS.parent)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.relative_to(DOCS.parent)}: {target} (no such heading)")
    assert broken == []
