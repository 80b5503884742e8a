"""docs/rankings.md: each committed ranking run rendered with its intervals and verdicts."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages import rankings

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def test_a_committed_run_is_ranked_with_intervals_and_verdict_counts() -> None:
    text = rankings.render(RESULTS)
    section = text.split("## The default run, interleaved")[1].split("\n## ")[0]
    assert "| 1 | `bottle:bjoern` |" in section
    assert "14 stacks; 13 of 13 ratios have an interval" in section
    assert "Adjacent pairs: " in section and "unresolved" in section


def test_a_run_not_made_yet_shows_its_command(tmp_path: Path) -> None:
    text = rankings.render(tmp_path)
    assert text.count("Not measured yet.") == len(rankings.RUNS)
    assert "--launch-block 15" in text
