"""The coverage grid's cells: a reading near an edge of 93-97% adds runs until it is clear of it."""

from __future__ import annotations

import pytest

from pywebbench.analyze import coverage
from pywebbench.analyze.coverage import Shape, near_edge, simulate_cell


def test_a_cell_clear_of_the_edges_stays_at_its_runs() -> None:
    cell = simulate_cell(Shape(4, 2, 14), runs=200, seed=5, settle=True)  # reads 95.5%, se 0.7%
    assert cell.se is not None and not near_edge(cell.covered / cell.intervals, cell.se)
    assert cell.runs == 200 and cell.intervals == 200 * 13


def test_a_cell_near_an_edge_adds_runs_up_to_its_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    first = simulate_cell(Shape(4, 1, 5), runs=200, seed=1)
    share = first.covered / first.intervals
    monkeypatch.setattr(coverage, "BAND", (0.5, share))  # its own reading is the edge: never clear of it
    monkeypatch.setattr(coverage, "EDGE_MAX_RATIOS", 3 * 200 * 4)
    monkeypatch.setattr(coverage, "EDGE_SE", 1e-9)
    settled = simulate_cell(Shape(4, 1, 5), runs=200, seed=1, settle=True)
    assert settled.runs == 600 and settled.intervals == 600 * 4  # three batches, then the cap
    assert settled.median_half_width == first.median_half_width  # the first batch's, as said
    assert settled.se is not None and first.se is not None and settled.se < first.se
    assert simulate_cell(Shape(4, 1, 5), runs=200, seed=1).runs == 200  # without settle: as asked


def test_near_edge_is_two_standard_errors() -> None:
    assert near_edge(0.971, 0.002) and near_edge(0.927, 0.002)
    assert not near_edge(0.965, 0.002) and not near_edge(0.95, 0.008)
