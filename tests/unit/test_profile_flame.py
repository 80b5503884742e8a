"""The flame graph SVG: valid XML, a rectangle per frame wide enough to draw, widths in proportion
to samples, a tooltip per frame, names escaped."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pywebbench.profile.flame import CATEGORY_COLOURS, MIN_WIDTH, PAD, WIDTH, by_category, call_tree, flame_svg
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


def test_frames_coloured_by_category_and_a_frame_no_rule_claims_takes_its_caller_s() -> None:
    stacks = Stacks.of({("main (gunicorn/app.py)", "handle (app.py)", "dumps (json/encoder.py)"): 5})
    colour = by_category({"main (gunicorn/app.py)": "server", "handle (app.py)": "app", "dumps (json/encoder.py)": ""})
    fills = {(g.findtext(f"{SVG}title") or "").split(":")[0]: g.find(f"{SVG}rect").get("fill")  # type: ignore[union-attr]
             for g in ET.fromstring(flame_svg(stacks, "t", colour)).iter(f"{SVG}g")}

    def near(fill: str | None, category: str) -> bool:
        rgb = [int(v) for v in (fill or "")[4:-1].split(",")]
        return all(abs(a - b) <= 15 for a, b in zip(rgb, CATEGORY_COLOURS[category], strict=True))

    assert near(fills["main (gunicorn/app.py)"], "server") and near(fills["handle (app.py)"], "app")
    assert near(fills["dumps (json/encoder.py)"], "app")  # the standard library in its caller's colour
    rooted = Stacks.of({("start (libc.so.6)", "main (gunicorn/app.py)", "send (libc.so.6)"): 5})
    colour = by_category({"start (libc.so.6)": "kernel", "main (gunicorn/app.py)": "server", "send (libc.so.6)": "kernel"})
    fills = {(g.findtext(f"{SVG}title") or "").split(":")[0]: g.find(f"{SVG}rect").get("fill")  # type: ignore[union-attr]
             for g in ET.fromstring(flame_svg(rooted, "t", colour)).iter(f"{SVG}g")}
    assert near(fills["send (libc.so.6)"], "kernel") and near(fills["start (libc.so.6)"], "rest")
