"""The differential of two synthetic profiles with a known change, and top functions by own time."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from pywebbench.profile.diff import differential, diff_colour, diff_flame_svg, grew_most, own_shares, top_changes
from pywebbench.profile.stacks import Stacks
from pywebbench.profile.top import top_functions

SVG = "{http://www.w3.org/2000/svg}"
# base: 1,000 samples; head: 2,000 (a faster head serves more in the same seconds). The head's
# json_dumps takes 35% of its samples (10% in base); render's share falls from 40% to 20%.
BASE = Stacks.of({
    ("main", "handle", "render"): 400,
    ("main", "handle", "json_dumps"): 100,
    ("main", "send"): 300,
    ("main", "parse"): 200,
})
HEAD = Stacks.of({
    ("main", "handle", "render"): 400,
    ("main", "handle", "json_dumps"): 700,
    ("main", "send"): 600,
    ("main", "parse"): 300,
})


def test_shares_are_of_each_version_s_own_samples() -> None:
    assert own_shares(BASE) == {"render": 0.4, "json_dumps": 0.1, "send": 0.3, "parse": 0.2}
    assert own_shares(HEAD)["json_dumps"] == pytest.approx(0.35)


def test_the_known_change_comes_first_with_both_shares() -> None:
    changes = differential(BASE, HEAD)
    assert [(c.function, round(c.base, 3), round(c.head, 3)) for c in changes] == [
        ("json_dumps", 0.1, 0.35), ("render", 0.4, 0.2), ("parse", 0.2, 0.15), ("send", 0.3, 0.3)]
    assert changes[0].delta == pytest.approx(0.25) and changes[1].delta == pytest.approx(-0.2)
    assert sum(c.delta for c in changes) == pytest.approx(0.0)  # shares of each sum to 1


def test_top_changes_takes_n_and_names_functions_of_either_side() -> None:
    gone = Stacks.of({("main", "old_cache"): 50, ("main", "handle"): 50})
    new = Stacks.of({("main", "handle"): 50, ("main", "new_cache"): 50})
    assert [c.function for c in top_changes(gone, new, n=2)] == ["new_cache", "old_cache"]
    assert [c.function for c in top_changes(BASE, HEAD, n=1)] == ["json_dumps"]
    assert len(top_changes(BASE, HEAD)) == 4  # fewer than ten functions: all of them


def test_the_function_that_grew_most() -> None:
    grown = grew_most(BASE, HEAD)
    assert grown is not None and grown.function == "json_dumps"
    assert grew_most(BASE, BASE) is None


def test_the_differential_flame_graph_colours_growth_red_and_shrinkage_blue() -> None:
    root = ET.fromstring(diff_flame_svg(BASE, HEAD, "flask:gunicorn-sync hello: head against base"))
    fills = {(g.findtext(f"{SVG}title") or "").split(":")[0]: g.find(f"{SVG}rect").get("fill")  # type: ignore[union-attr]
             for g in root.iter(f"{SVG}g")}
    assert fills["json_dumps"] == diff_colour(0.25) == "rgb(255,35,35)"  # 25 points: full red
    assert fills["render"] == diff_colour(-0.2) == "rgb(35,35,255)"
    assert fills["send"] == diff_colour(0.0)
    tips = [g.findtext(f"{SVG}title") or "" for g in root.iter(f"{SVG}g")]
    assert "json_dumps: 35.0% of head's samples (700), 10.0% in base" in tips
    assert fills["parse"] == diff_colour(-0.05)


def test_top_functions_by_own_time() -> None:
    top = top_functions(HEAD, n=3)
    assert [(f.function, f.own, f.total) for f in top] == [("json_dumps", 700, 700), ("send", 600, 600),
                                                          ("render", 400, 400)]
    assert top[0].own_share == pytest.approx(0.35)
    assert "main" not in [f.function for f in top_functions(HEAD, n=10)]  # never a leaf: no own time


def test_total_time_counts_a_recursive_function_once_per_sample() -> None:
    stacks = Stacks.of({("main", "walk", "walk", "walk"): 5, ("main", "other"): 5})
    walk = next(f for f in top_functions(stacks) if f.function == "walk")
    assert (walk.own, walk.total, walk.total_share) == (5, 5, 0.5)


def test_a_busy_loop_on_a_native_clock_is_its_python_functions_time() -> None:
    """The head's injected function spins on time.perf_counter: its samples end in libc's clock,
    and the gate must still name the Python function, not libc."""
    handler, query = "notes (notes.py)", "execute (sqlite3/dbapi.py)"
    base = Stacks.of({(handler, query, "sqlite3_step (libsqlite3.so.0)"): 70, (handler, "jsonify (flask/json.py)"): 30})
    head = Stacks.of({(handler, query, "sqlite3_step (libsqlite3.so.0)"): 70, (handler, "jsonify (flask/json.py)"): 30,
                      (handler, "_audit_trail (notes.py)", "clock_gettime (libc.so.6)"): 20,
                      (handler, "_audit_trail (notes.py)", "[unknown] (libc.so.6)"): 5})
    first = top_changes(base, head, 3)[0]
    assert first.function == "_audit_trail (notes.py)" and first.base == 0.0
    assert first.head == pytest.approx(25 / 125)
    assert own_shares(base)[query] == pytest.approx(0.7)  # the native step counts with the query's Python frame
    grown = grew_most(base, head)
    assert grown is not None and grown.function == "_audit_trail (notes.py)"
