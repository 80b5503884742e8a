"""The README's tuning example is rendered from the committed run, none of its figures typed."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages import readme_tuning

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def test_the_example_reads_its_table_and_figures_off_the_committed_run() -> None:
    text = readme_tuning.section(RESULTS)
    assert text.startswith("| # | Class | Workers x threads |")
    assert "| 1 | gthread | 1 x 4 | 1,405 req/s |" in text  # rank 1 of tuning.json
    assert "| 10 | sync | 1 x 1 |" in text  # the single sync worker the answer is read against
    assert "Rows 6-9 and 11-13 are in" in text
    assert "`gunicorn --workers 1 --worker-class gthread --threads 4 notes:app`" in text
    assert "held 1.30x the rate of one sync worker" in text


def test_rank_ranges_and_spans_read_as_words() -> None:
    assert readme_tuning._ranges([6, 7, 8, 9, 11, 12, 13]) == "6-9 and 11-13"
    assert readme_tuning._ranges([4]) == "4"
    assert readme_tuning._ranges([1, 3, 4, 6]) == "1, 3-4 and 6"
    assert readme_tuning._span([0.044, 0.0441]) == "4.4%"
    assert readme_tuning._span([0.04, 0.05]) == "4.0%-5.0%"


def test_without_a_committed_run_it_says_so(tmp_path: Path) -> None:
    assert "No tuning run committed yet" in readme_tuning.section(tmp_path)
