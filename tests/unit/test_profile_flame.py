"""The flame graph SVG: valid XML, a rectangle per frame wide enough to draw, widths in proportion
to samples, a tooltip per frame, names escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pywebbench.profile.flame import MIN_WIDTH, PAD, WIDTH, call_tree, flame_svg
from pywebbench.profile.stacks import Stacks

SVG = "{http://www.w3.org/2000/svg}"
STACKS = Stacks.of({
    ("main", "serve", "handle", "render"): 30,
    ("main", "serve", "handle"): 10,
    ("main", "serve", "parse"): 20,
    ("main", "idle"): 40,
})


def _frames(svg: str) -> list[tuple[str, float]]:
    """(tooltip, width) of each frame, the root 'all' first."""
    root = ET.fromstring(svg)
    return [(g.findtext(f"{SVG}title") or "", float(g.find(f"{SVG}rect").get("width", "0")))  # type: ignore[union-attr]
            for g in root.iter(f"{SVG}g")]


def test_one_rectangle_per_frame_each_as_wide_as_its_samples() -> None:
    svg = flame_svg(STACKS, "flask:gunicorn-sync hello")
    frames = _frames(svg)
    # all, main, serve, handle, render, parse, idle
    assert len(frames) == 7
    widths = {title.split(":")[0]: width for title, width in frames}
    full = WIDTH - 2 * PAD
    assert widths["all"] == pytest.approx(full, abs=0.01)
    for name, samples in (("main", 100), ("serve", 60), ("handle", 40), ("render", 30), ("parse", 20), ("idle", 40)):
        assert widths[name] == pytest.approx(full * samples / 100, abs=0.01), name
    assert "render: 30 samples, 30.0%" in [title for title, _ in frames]


def test_the_document_states_its_size_and_has_no_script() -> None:
    root = ET.fromstring(flame_svg(STACKS, "t"))
    assert root.get("width") == str(WIDTH)
    assert not list(root.iter(f"{SVG}script"))


def test_names_are_escaped_and_long_names_are_cut_to_fit() -> None:
    hostile = '</title><script>alert("x")</script> & <b>'
    svg = flame_svg(Stacks.of({("main", hostile * 20): 1, ("main", "x"): 999}), 'a "title" <with> tags')
    root = ET.fromstring(svg)  # still one well-formed document
    assert not list(root.iter(f"{SVG}script"))
    labels = [t.text or "" for t in root.iter(f"{SVG}text")]
    assert all(len(label) * 7.2 <= WIDTH for label in labels)
    assert any(label.endswith("..") for label in labels) or hostile not in labels


def test_frames_too_narrow_to_see_are_left_out_but_counted_in_their_parent() -> None:
    tiny = Stacks.of({("main", "big"): 100_000, ("main", "tiny"): 1})
    titles = [title for title, _ in _frames(flame_svg(tiny, "t"))]
    assert not any(t.startswith("tiny") for t in titles)
    assert call_tree(tiny).children["main"].samples == 100_001
    assert (WIDTH - 2 * PAD) / 100_001 < MIN_WIDTH


def test_no_samples_still_makes_a_document() -> None:
    root = ET.fromstring(flame_svg(Stacks.of({}), "empty"))
    assert "no samples" in [t.text for t in root.iter(f"{SVG}text")]
