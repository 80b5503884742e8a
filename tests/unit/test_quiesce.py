"""The wait after a launch: until the launched servers are idle, or a timeout that is said."""

from __future__ import annotations

import subprocess
import sys
import time

import pytest

from pywebbench.measure.launchers import RunningServer
from pywebbench.measure.quiesce import ServersCpu, idle_share, wait_until_idle


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _cpu(shares: list[float], clock: FakeClock, sample_s: float = 0.25):  # type: ignore[no-untyped-def]
    """CPU seconds so far when each successive sample used the given share of a CPU."""
    total = [0.0]
    calls = [0]

    def read() -> float:
        if calls[0] > 0:
            total[0] += shares[min(calls[0] - 1, len(shares) - 1)] * sample_s
        calls[0] += 1
        return total[0]
    return read


def test_waits_through_the_boot_storm_and_stops_at_the_first_idle_sample() -> None:
    clock = FakeClock()
    quiet = wait_until_idle(_cpu([1.9, 1.8, 0.9, 0.01], clock), 10, clock=clock, sleep=clock.sleep)
    assert quiet.settled and quiet.waited_s == 1.0 and quiet.last_share < idle_share(10)


def test_already_idle_servers_cost_one_sample() -> None:
    clock = FakeClock()
    quiet = wait_until_idle(_cpu([0.0], clock), 3, clock=clock, sleep=clock.sleep)
    assert quiet.settled and quiet.waited_s == 0.25


def test_a_server_that_never_idles_ends_at_the_timeout_unsettled() -> None:
    clock = FakeClock()
    quiet = wait_until_idle(_cpu([1.0], clock), 2, timeout_s=5.0, clock=clock, sleep=clock.sleep)
    assert not quiet.settled and 5.0 <= quiet.waited_s < 5.5 and abs(quiet.last_share - 1.0) < 1e-9


def test_the_idle_threshold_grows_with_the_servers_launched() -> None:
    assert idle_share(52) > idle_share(2) > 0


@pytest.mark.serial  # the wall clock (a budget) or a process's CPU time: a neighbour moves it
def test_servers_cpu_reads_a_real_busy_process_tree() -> None:
    busy = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        read = ServersCpu([RunningServer(0, (), lambda: True, lambda: "", pids=(busy.pid,))])
        first = read()
        time.sleep(0.5)
        used = read() - first
        assert 0.2 < used < 0.8  # one spinning process: about half a CPU-second in half a second
    finally:
        busy.kill()
        busy.wait()
