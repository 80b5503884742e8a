"""--slo parsing and the capacity search on a known latency curve."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from pywebbench.analyze.ratesearch import Capacity, CapacitySearch, search_capacity
from pywebbench.core.errors import UserError
from pywebbench.plan.slo import Slo, parse_slo


def test_slo_texts() -> None:
    assert parse_slo("p99<100ms") == Slo(99.0, 100.0)
    assert parse_slo(" p99.9 < 0.25s ") == Slo(99.9, 250.0)
    for bad in ("p99>100ms", "p100<1ms", "99<100ms", "p99<0ms", "p99<100"):
        with pytest.raises(UserError):
            parse_slo(bad)
    assert Slo(99, 100).met(99.9) and not Slo(99, 100).met(100.0) and not Slo(99, 100).met(None)


def _queue(capacity: float) -> tuple[Callable[[float], float | None], list[float]]:
    """p99 of a server that keeps up below `capacity` and queues past it."""
    calls: list[float] = []

    def measure(rate: float) -> float | None:
        calls.append(rate)
        return 5.0 if rate <= capacity else 5.0 + (rate - capacity) * 10
    return measure, calls


def test_the_search_brackets_then_bisects_to_the_resolution() -> None:
    measure, calls = _queue(1_300.0)
    found = search_capacity(measure, Slo(99, 50), start=100, max_rate=100_000, resolution=0.02, max_probes=20)
    assert found.stopped == "resolved"
    assert found.rate is not None and found.failed_at is not None
    assert found.rate <= 1_304.5 < found.failed_at  # 5 ms + 10 ms per req/s past capacity: 50 ms at 1,304.5
    assert found.bracket is not None and found.bracket <= 0.02
    assert calls[:5] == [100, 200, 400, 800, 1600]


def test_a_first_rate_too_high_halves_and_a_hopeless_app_stops_at_the_floor() -> None:
    measure, calls = _queue(300.0)
    found = search_capacity(measure, Slo(99, 50), start=5_000, max_rate=10_000, resolution=0.05, max_probes=20)
    assert calls[:5] == [5_000, 2_500, 1_250, 625, 312.5]
    assert found.rate is not None and 304.5 / 1.05 <= found.rate <= 304.5
    never = search_capacity(lambda rate: None, Slo(99, 50), start=640, max_rate=1000, max_probes=50)
    assert never.rate is None and never.stopped == "floor" and never.probes[-1].rate == 10


def test_an_app_faster_than_the_max_rate_and_a_search_out_of_probes() -> None:
    measure, _ = _queue(1e9)
    assert search_capacity(measure, Slo(99, 50), start=100, max_rate=1000).stopped == "max-rate"
    measure, _ = _queue(1_300.0)
    short = search_capacity(measure, Slo(99, 50), start=100, max_rate=100_000, resolution=0.001, max_probes=7)
    assert short.stopped == "probes" and len(short.probes) == 7 and short.rate is not None


def test_a_failed_probe_is_made_again_and_the_second_decides() -> None:
    from pywebbench.analyze.ratesearch import CapacitySearch
    measure, calls = _queue(1_300.0)
    fluke = {200.0}  # one window at 200 req/s spoiled by a neighbour

    def noisy(rate: float) -> float | None:
        if rate in fluke:
            fluke.discard(rate)
            return 500.0
        return measure(rate)
    search = CapacitySearch(Slo(99, 50), start=100, max_rate=100_000, resolution=0.05, max_probes=20,
                            confirm_failures=True)
    while (rate := search.next_rate) is not None:
        search.record(noisy(rate))
    found = search.result()
    assert [p.rate for p in found.probes[:4]] == [100, 200, 200, 400]  # the fluke, then its repeat
    assert found.stopped == "resolved" and found.rate is not None and found.rate <= 1_304.5 < (found.failed_at or 0)
    # every first failure at a rate was made again at once
    probes = found.probes
    for i, probe in enumerate(probes[:-1]):
        if not probe.met and (i == 0 or probes[i - 1].rate != probe.rate):
            assert probes[i + 1].rate == probe.rate


def _saturating(capacity: float, flat_out: float, search: CapacitySearch) -> Capacity:
    """A server whose p99 holds 50 ms up to `capacity` and that completes at most `flat_out`
    req/s however much it is offered; the search told what each probe completed."""
    while (rate := search.next_rate) is not None:
        search.record_held(5.0 if rate <= capacity else 900.0, rate <= capacity, min(rate, flat_out))
    return search.result()


def _probes_to_resolve(completed: bool, ceiling: float | None = None, start: float = 100) -> Capacity:
    search = CapacitySearch(Slo(99, 50), start=start, max_rate=100_000, resolution=0.05, max_probes=16,
                            confirm_failures=True, ceiling=ceiling)
    if completed:
        return _saturating(3_300.0, 3_600.0, search)
    while (rate := search.next_rate) is not None:
        search.record_held(5.0 if rate <= 3_300 else 900.0, rate <= 3_300)
    return search.result()


def test_a_saturated_failure_sends_the_next_probes_below_what_it_completed() -> None:
    blind, told = _probes_to_resolve(completed=False), _probes_to_resolve(completed=True)
    for found in (blind, told):
        assert found.stopped == "resolved" and found.rate is not None and found.failed_at is not None
        assert found.rate <= 3_300 < found.failed_at and found.failed_at / found.rate - 1 <= 0.05
    assert len(told.probes) <= len(blind.probes) - 3  # fewer probes to the same resolution
    # a probe far past what the server completed is not made again to confirm it
    over = [p for p in told.probes if p.rate > 3_600 / 0.75]
    assert len(over) == len({p.rate for p in over})


def test_a_ceiling_from_an_earlier_stage_caps_the_climb_and_a_wrong_one_is_dropped() -> None:
    capped = _probes_to_resolve(completed=False, ceiling=3_500.0, start=3_000.0)
    assert capped.stopped == "resolved" and max(p.rate for p in capped.probes) <= 3_500
    assert len(capped.probes) <= 5
    wrong = _probes_to_resolve(completed=False, ceiling=3_100.0, start=2_000.0)  # it holds past 3,100
    assert wrong.stopped == "resolved" and wrong.rate is not None and wrong.failed_at is not None
    assert wrong.rate <= 3_300 < wrong.failed_at
