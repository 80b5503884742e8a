"""PeakSampler: a gauge read on a thread while load runs, its peak kept (seed 000's #DB column)."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Sequence

import pytest

from pywebbench.services.backing import PeakSampler

pytestmark = pytest.mark.serial  # reads CPU time or waits on the clock: never beside a test worker

WAIT_S = 5.0


class ScriptedGauge:
    """Answers each read with the next scripted value, then None; says when the script is read out."""

    def __init__(self, values: Sequence[int | None]) -> None:
        self._lock = threading.Lock()
        self._left: deque[int | None] = deque()
        self.reads = 0
        self.done = threading.Event()
        self.threads: set[threading.Thread] = set()
        self.add(values)

    def add(self, values: Sequence[int | None]) -> None:
        with self._lock:
            self._left.extend(values)
            self.done.clear()

    def __call__(self) -> int | None:
        with self._lock:
            self.threads.add(threading.current_thread())
            self.reads += 1
            value = self._left.popleft() if self._left else None
            if not self._left:
                self.done.set()
            return value


def test_the_peak_is_the_largest_value_read_and_nones_are_skipped() -> None:
    gauge = ScriptedGauge([None, 3, 7, None, 5, 2, None])
    with PeakSampler(gauge, interval_s=0.001) as sampler:
        assert gauge.done.wait(WAIT_S)
    assert sampler.peak == 7
    assert gauge.reads >= 7


def test_the_peak_follows_the_values_while_the_load_runs() -> None:
    gauge = ScriptedGauge([4])
    with PeakSampler(gauge, interval_s=0.001) as sampler:
        assert gauge.done.wait(WAIT_S)
        deadline = time.monotonic() + WAIT_S
        while sampler.peak is None and time.monotonic() < deadline:
            time.sleep(0.001)
        assert sampler.peak == 4
        gauge.add([9, 1])  # a later, higher reading raises it; a lower one does not lower it
        assert gauge.done.wait(WAIT_S)
    assert sampler.peak == 9


def test_the_peak_is_none_when_no_value_was_read() -> None:
    gauge = ScriptedGauge([None, None, None])
    with PeakSampler(gauge, interval_s=0.001) as sampler:
        assert gauge.done.wait(WAIT_S)
    assert sampler.peak is None


def test_the_thread_stops_on_exit_without_waiting_out_its_interval() -> None:
    gauge = ScriptedGauge([1])
    sampler = PeakSampler(gauge, interval_s=30.0)
    with sampler:
        assert gauge.done.wait(WAIT_S)
        started = time.monotonic()
    assert time.monotonic() - started < 1.0  # the stop wakes the sleeping sampler
    (reader,) = gauge.threads
    assert reader is not threading.current_thread()
    assert not reader.is_alive()
    reads = gauge.reads
    time.sleep(0.05)
    assert gauge.reads == reads == 1  # nothing read after exit
    assert sampler.peak == 1
