"""docs/profiles.md's gate example, rendered from the found.json files scripts/profile-gate-series keeps."""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.report.pages.profile_gates import section


def _gate(root: Path, series: str, n: int, first: str, window: str | None) -> None:
    folder = root / "profile-gate" / series / str(n)
    folder.mkdir(parents=True)
    found = {"exit": 0, "spin_us": 15.0, "threshold": "2%", "budget": "60s", "first_named": first,
             "found": "_audit_trail" in first}
    if window is not None:
        found["profile_window"] = window
    (folder / "found.json").write_text(json.dumps(found))


def test_each_series_counts_the_gates_that_named_the_injected_function_first(tmp_path: Path) -> None:
    for n, first in enumerate(["_audit_trail (notes.py)", "", "_connect (notes.py)"], start=1):
        _gate(tmp_path, "15us", n, first, None)
    for n in range(1, 11):
        _gate(tmp_path, "15us-30s", n, "_audit_trail (notes.py)" if n != 4 else "render (jinja2)", "30s")
    text = section(tmp_path)
    rows = [line for line in text.splitlines() if line.startswith("| `15us")]
    assert rows[0].startswith("| `15us` | 15 us | the measured windows' own (4 s) | 60s | 3 | 1 of 3 |")
    assert "2: no table; 3: _connect (notes.py)" in rows[0]
    assert rows[1].startswith("| `15us-30s` | 15 us | 30s | 60s | 10 | 9 of 10 |") and "4: render (jinja2)" in rows[1]


def test_no_series_says_how_to_make_one(tmp_path: Path) -> None:
    assert "Not run yet: `scripts/profile-gate-series`" in section(tmp_path)
