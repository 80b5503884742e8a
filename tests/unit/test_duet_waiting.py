"""The duet's method note names the sides measured to be waiting rather than computing."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pywebbench.analyze.rows import summarize
from pywebbench.report.common import method_note, waiting_sides
from pywebbench.results.store import load_results

DUET_RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "rankings" / "default-duet"


def test_cpu_bound_duet_sides_are_not_named_and_a_waiting_one_is() -> None:
    rows = [r for r in summarize(load_results(DUET_RUN)).rows if r.method == "duet"]
    assert waiting_sides(rows) == ""  # every hello side used 48-50% of the one shared CPU
    slow = replace(rows[3], cpu_percent=12.0)
    note = method_note([*rows[:3], slow, *rows[4:]])
    assert f"Waiting, not computing: {slow.label} on hello (12% of a CPU)" in note
    assert "--method interleaved" in note
