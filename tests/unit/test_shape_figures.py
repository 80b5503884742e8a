"""A connection shape's own figures (analyze/shape_figures.py): each a mean of launch means with
Student's t over them, the connections' worst window, MB/s from bytes or an upload's bodies."""

from __future__ import annotations

import math

import pytest

from pywebbench.analyze.rows import summarize
from pywebbench.analyze.shape_figures import figure, shape_row, t_interval
from pywebbench.results.model import ResultSet
from support.builders import header
from support.shape_results import LOOP, SYNC, idle_windows, load, stream_windows, window


def test_t_interval_is_student_s_over_the_values_and_none_below_two() -> None:
    low, high = t_interval([2.0, 3.0, 4.0]) or (0.0, 0.0)
    # mean 3, sd 1, t(0.975, 2) = 4.303: 3 +- 4.303 / sqrt(3)
    assert (low, high) == pytest.approx((3 - 4.3027 / math.sqrt(3), 3 + 4.3027 / math.sqrt(3)), abs=1e-3)
    assert t_interval([5.0]) is None


def test_a_figure_averages_each_launch_before_the_interval() -> None:
    # launch 1 has two windows (1 and 3: mean 2), launch 2 one (4): the launch means are 2 and 4
    trials = [window(LOOP, "close", 1, load(1.0, 1.0)), window(LOOP, "close", 1, load(3.0, 1.0)),
              window(LOOP, "close", 2, load(4.0, 1.0))]
    found = figure(trials, lambda t: t.load.rps if t.load else None)
    assert found is not None and found.launches == 2 and found.value == pytest.approx(3.0)
    one = figure(trials[:2], lambda t: t.load.rps if t.load else None)
    assert one is not None and one.launches == 1 and one.interval is None


def test_idle_rows_carry_memory_per_connection_and_the_connections_worst_window() -> None:
    rows = summarize(ResultSet(header(), tuple(idle_windows()), complete=True)).rows
    loop = next(r for r in rows if r.label == LOOP.id and r.spec.connections == 1000)
    assert loop.shape is not None and loop.shape.rss_kb_per_connection is not None
    assert loop.shape.rss_kb_per_connection.value == pytest.approx(3.0, abs=0.01)
    assert loop.shape.rss_kb_per_connection.launches == 3 and loop.shape.rss_kb_per_connection.interval is not None
    assert (loop.shape.asked, loop.shape.held, loop.shape.refused, loop.shape.closed) == (1000, 1000, 0, 0)
    # a p99 is positive: its launch means' geometric mean (2, 3, 4 ms)
    assert loop.shape.p99_ms is not None and loop.shape.p99_ms.value == pytest.approx(24 ** (1 / 3))
    assert loop.shape.mb_s is None  # the Go driver's shapes count units, not bytes
    sync = next(r for r in rows if r.label == SYNC.id and r.spec.connections == 100)
    assert sync.shape is not None and sync.shape.rss_kb_per_connection is None  # none opened: no per-connection
    assert (sync.shape.held, sync.shape.refused) == (0, 100)


def test_stream_rows_carry_mb_s_and_cpu_per_mb() -> None:
    found = shape_row(stream_windows())
    assert found is not None and found.mb_s is not None and found.cpu_s_per_mb is not None
    assert found.mb_s.value == pytest.approx(6000 ** (1 / 3))  # 10, 20, 30 MB/s: their geometric mean
    # 1 CPU second over 20, 40, 60 MB, geometric
    assert found.cpu_s_per_mb.value == pytest.approx((1 / 20 * 1 / 40 * 1 / 60) ** (1 / 3))


def test_an_upload_counts_its_bodies_not_the_bytes_it_read() -> None:
    found = shape_row([window(LOOP, "upload", 1, load(50.0, 10.0, bytes_read=123))])
    assert found is not None and found.mb_s is not None
    assert found.mb_s.value == pytest.approx(50.0 * 2**20 / 1e6)


def test_other_workloads_have_no_shape_figures() -> None:
    assert shape_row([window(LOOP, "hello", 1, load(100.0, 1.0))]) is None
    assert shape_row([]) is None


def test_a_positive_figure_is_geometric_and_its_interval_stays_above_zero() -> None:
    from support.builders import trial
    from dataclasses import replace as _replace
    windows = [_replace(t, spec=_replace(t.spec, launch=i + 1))
               for i, t in enumerate(trial("s:s", rps, round_no=i + 1) for i, rps in enumerate((1.0, 10.0, 100.0)))]
    linear = figure(windows, lambda t: t.load.rps if t.load else None)
    logged = figure(windows, lambda t: t.load.rps if t.load else None, positive=True)
    assert linear is not None and linear.interval is not None and linear.interval[0] < 0
    assert logged is not None and logged.interval is not None
    assert abs(logged.value - 10.0) < 1e-9 and 0 < logged.interval[0] < 10.0 < logged.interval[1]
