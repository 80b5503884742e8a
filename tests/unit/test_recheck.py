"""The report-time re-check: stored checks re-derived under the current rules, and the
generator ceilings a run recorded read back for the near-ceiling check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from pywebbench.analyze.rows import rechecked, recorded_ceilings, summarize
from pywebbench.measure.checks import RECOMPUTED, Check, check_name, trial_checks
from support.fake_loadgen import synthetic_result
from pywebbench.results.model import ResourceUsage, ResultSet, ServiceRecord, SocketErrors, TrialResult
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, trial

STACK = "flask:gunicorn-sync"
# 10,000 req/s x 10 ms mean latency = 100 in flight over the builder's 100 connections:
# Little's law holds, so a clean trial of these figures fires no check at all.
RPS = 10_000.0


def _clean(**changes: Any) -> TrialResult:
    base = trial(STACK, RPS, p50_ms=10.0)
    assert trial_checks(base, None) == ()  # the premise every test below starts from
    return replace(base, **changes)


def _busy(percent: float) -> tuple[ResourceUsage, ...]:
    """Other processes' CPU over the builder's 2 s window, as a percent of one core."""
    return (ResourceUsage("other", cpu_s=percent / 100.0 * 2.0, peak_rss_mb=0.0, processes=90, window_s=2.0),)


def _ceiling_record(connections: int = 100, rps: float = 11_000.0, errors: int = 0,
                    loadgen_cpus: tuple[int, ...] = (0,), stack_cpus: tuple[int, ...] = (1,)) -> ServiceRecord:
    """A record with the keys GeneratorCeiling writes (pywebbench.measure.ceiling)."""
    return ServiceRecord("generator-ceiling", "nginx/1.22.1", {
        "generator": "fake", "connections": connections, "rps": rps, "errors": errors, "nginx_workers": 1,
        "stack_cpus": list(stack_cpus), "loadgen_cpus": list(loadgen_cpus), "window_s": 2.0,
    })


def _stored(tmp_path: Path, trials: list[TrialResult], services: tuple[ServiceRecord, ...] = ()) -> ResultSet:
    """Through the results file and back, as `pywebbench report` reads a run."""
    writer = ResultsWriter(results_path(tmp_path), header())
    for service in services:
        writer.add_service(service)
    for t in trials:
        writer.add_trial(t)
    writer.finish("complete")
    writer.close()
    return load_results(tmp_path)


# --- rechecked --------------------------------------------------------------------------------


def test_a_stored_check_that_no_longer_fires_is_dropped() -> None:
    # An older rule flagged this trial; its stored figures satisfy every current rule.
    stale = _clean(checks=("littles-law: 10,000 req/s x 10.0 ms = 100.0 in flight, but 100 connections",
                           "busy-machine: other processes used 25% of a core"))
    assert rechecked(stale, {}) == ()


def test_a_check_that_now_fires_is_added_in_the_current_wording() -> None:
    # Stored before the busy-machine rule existed: the figures were there, the check was not.
    old = _clean(resources=_busy(35.0))
    assert old.checks == ()
    assert rechecked(old, {}) == ("busy-machine: other processes used 35% of a core",)


def test_a_stored_check_that_still_fires_keeps_its_recorded_wording() -> None:
    recorded = "busy-machine: 35% of a core went to other processes (older wording)"
    old = _clean(resources=_busy(35.0), checks=(recorded,))
    # kept as recorded, and not repeated in today's words
    assert rechecked(old, {}) == (recorded,)


def test_new_checks_follow_the_kept_ones() -> None:
    recorded = "busy-machine: recorded wording"
    errors = synthetic_result(RPS, 2.0, p50_ms=10.0, socket_errors=SocketErrors(timeout=7))
    old = _clean(resources=_busy(35.0), checks=(recorded,), load=errors)
    assert rechecked(old, {}) == (
        recorded, "errors: 7 of 20007 (connect 0, read 0, write 0, timeout 7, non-2xx 0)")


def test_no_overlap_is_kept_as_recorded_because_only_the_live_server_could_tell() -> None:
    assert Check.NO_OVERLAP not in RECOMPUTED
    overlap = "no-overlap: 10 requests of 0.2 s took 2.0 s together"
    stored = _clean(checks=(overlap, "littles-law: stale"))
    assert rechecked(stored, {}) == (overlap,)  # the recomputed stale one goes, no-overlap stays


def test_a_trial_without_a_load_result_keeps_what_it_recorded() -> None:
    failed = _clean(load=None, checks=("littles-law: as recorded",))
    assert rechecked(failed, {}) == ("littles-law: as recorded",)


# --- recorded_ceilings ------------------------------------------------------------------------


def test_ceilings_are_read_from_generator_ceiling_records_keyed_by_connections_and_cpus(tmp_path: Path) -> None:
    results = _stored(tmp_path, [_clean()], (
        ServiceRecord("postgresql", "15.8", {"rps": 5.0, "connections": 100}),  # not a ceiling record
        _ceiling_record(connections=100, rps=11_000.0),
        _ceiling_record(connections=25, rps=9_000.0, loadgen_cpus=(0, 1), stack_cpus=(0, 1)),
    ))
    # The keys are what rechecked looks a trial up by: (connections, loadgen CPUs, stack CPUs),
    # CPU lists made tuples again after the JSON round trip.
    assert recorded_ceilings(results) == {(100, (0,), (1,), None, "h1"): 11_000.0, (25, (0, 1), (0, 1), None, "h1"): 9_000.0}


def test_a_ceiling_record_with_errors_or_no_rps_is_ignored(tmp_path: Path) -> None:
    results = _stored(tmp_path, [_clean()], (
        _ceiling_record(connections=100, rps=11_000.0, errors=3),
        _ceiling_record(connections=50, rps=0.0),
        # what GeneratorCeiling records when the ceiling could not be measured: no rps at all
        ServiceRecord("generator-ceiling", "", {"connections": 25, "stack_cpus": [1], "loadgen_cpus": [0],
                                                "error": "nginx exited with code 1 while starting"}),
    ))
    assert recorded_ceilings(results) == {}


# --- near-ceiling at report time --------------------------------------------------------------


def test_near_ceiling_fires_at_report_time_from_the_recorded_ceiling(tmp_path: Path) -> None:
    near = _clean()  # 10,000 req/s: 91% of the 11,000 recorded
    far = trial("starlette:uvicorn", 5_000.0, p50_ms=20.0)  # 45%: below the 80% threshold
    other_cell = trial("falcon:meinheld", 10_000.0, p50_ms=2.5, connections=25)  # no ceiling at 25 connections
    results = _stored(tmp_path, [near, far, other_cell], (_ceiling_record(connections=100, rps=11_000.0),))
    expected = "near-ceiling: 10,000 req/s is 91% of the 11,000 req/s fake reaches against nginx static"
    ceilings = recorded_ceilings(results)
    stored_near, stored_far, stored_other = results.trials
    assert rechecked(stored_near, ceilings) == (expected,)
    assert rechecked(stored_far, ceilings) == ()
    assert rechecked(stored_other, ceilings) == ()
    # and the report's rows carry it
    rows = {row.label: row for row in summarize(results).rows}
    assert expected in rows[STACK].checks
    assert not any(check_name(c) == Check.NEAR_CEILING for c in rows["starlette:uvicorn"].checks)
    assert not any(check_name(c) == Check.NEAR_CEILING for c in rows["falcon:meinheld"].checks)


def test_a_stored_near_ceiling_check_goes_when_the_ceiling_record_had_errors(tmp_path: Path) -> None:
    # The run-time check used a ceiling the report cannot trust; the report drops it rather than
    # keep a comparison against a figure that counted failures.
    flagged = _clean(checks=("near-ceiling: 10,000 req/s is 91% of the 11,000 req/s fake reaches",))
    results = _stored(tmp_path, [flagged], (_ceiling_record(rps=11_000.0, errors=2),))
    assert rechecked(results.trials[0], recorded_ceilings(results)) == ()


def test_a_window_is_checked_against_the_ceiling_of_its_own_protocol(tmp_path: Path) -> None:
    h1 = _clean()  # 10,000 req/s
    h2c = _clean()
    h2c = replace(h2c, spec=replace(h2c.spec, trial_id="r1-h2c", protocol="h2c"))
    h2c_ceiling = _ceiling_record(rps=50_000.0)
    h2c_ceiling = replace(h2c_ceiling, config={**h2c_ceiling.config, "generator": "h2load", "protocol": "h2c"})
    # recorded in this order, the h2c ceiling last: it must not stand for h1's
    results = _stored(tmp_path, [h1, h2c], (_ceiling_record(rps=11_000.0), h2c_ceiling))
    ceilings = recorded_ceilings(results)
    stored_h1, stored_h2c = results.trials
    assert [check_name(c) for c in rechecked(stored_h1, ceilings)] == [Check.NEAR_CEILING]  # 91% of wrk's h1
    assert rechecked(stored_h2c, ceilings) == ()  # 20% of h2load's h2c
