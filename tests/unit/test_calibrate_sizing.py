"""calibrate's sizing: the probe's CPU ratio with A's and B's own errors, and the main phase's
CPU ratio checked against what the sizing expected."""

from __future__ import annotations

import math
import random
from dataclasses import replace

import pytest

from pywebbench.analyze.calibrate import calibrate_report, expected_ab, size_extra_work
from pywebbench.analyze.calibrate_probe import EXTRA_WORK_ENV
from pywebbench.analyze.calibrate_sizing import launch_mean_error, reciprocal, unpaired_cpu_ratio
from pywebbench.analyze.paired import Interval, Observation
from pywebbench.analyze.rows import summarize
from pywebbench.report.calibration import render_calibration
from pywebbench.results.model import ResourceUsage, ResultSet, TrialResult, TrialSpec, TrialStatus
from support.builders import header, stack
from support.fake_loadgen import synthetic_result

PROBE = 10_000


def _trial(alias: str, round_no: int, per_launch: int, rps: float, cpu_us: float,
           env: tuple[tuple[str, str], ...] = ()) -> TrialResult:
    spec = TrialSpec(f"r{round_no}-x#{alias}", "flask:gunicorn-sync", "hello", 100, 5.0, 1.0, round_no, "wrk",
                     alias=alias, method="interleaved", launch=1 + (round_no - 1) // per_launch, settle_s=0.5,
                     app_env=env)
    load = synthetic_result(rps, 5.0)
    app = ResourceUsage("app", cpu_s=cpu_us * load.requests / 1e6, peak_rss_mb=50.0, processes=4, window_s=5.0)
    return TrialResult(spec, stack("flask:gunicorn-sync"), TrialStatus.OK, "", "", load=load, resources=(app,),
                       cpu_source="cgroup-v1")


def _sizing(drift: float, seed: int = 5) -> ResultSet:
    """8 rounds in 4 launches of A and B (A plus 100 us of probe); each launch moves both sides'
    CPU per request by the same factor of sd `drift`, which the paired ratio cancels."""
    noise = random.Random(seed)
    trials = []
    for i in range(8):
        if i % 2 == 0:
            shared = math.exp(noise.gauss(0, drift))
        for alias, cpu, env in (("A", 200.0, ()), ("B", 300.0, ((EXTRA_WORK_ENV, str(PROBE)),))):
            used = cpu * shared * (1 + noise.gauss(0, 0.002))
            trials.append(_trial(alias, i + 1, 2, 1e6 / used, used, env))
    return ResultSet(replace(header(), options={"baseline": "flask:gunicorn-sync#A"}), tuple(trials))


def test_a_drift_both_sides_shared_widens_the_sizing_s_interval_the_pairing_hid() -> None:
    run = _sizing(drift=0.03)
    paired = next(r for r in summarize(run).rows if r.spec.alias == "B").cpu_ratio_interval
    assert paired is not None
    honest = unpaired_cpu_ratio(run, paired)
    assert honest is not None and honest.center == paired.center
    assert honest.se_log > 5 * paired.se_log and honest.low < paired.low and honest.high > paired.high
    assert 3.0 <= honest.df <= 6.0  # two sides' 3 df each, by Satterthwaite
    sizing = size_extra_work(run, 0.02, PROBE)
    assert sizing.probe_ratio == honest
    expected = expected_ab(sizing)
    assert expected is not None and expected.se_log > 5 * expected_ab(
        sizing.__class__(**{**sizing.__dict__, "probe_ratio": paired})).se_log  # type: ignore[union-attr]


def test_the_paired_interval_stays_where_it_is_the_wider_or_launches_are_too_few() -> None:
    run = _sizing(drift=0.0)
    paired = next(r for r in summarize(run).rows if r.spec.alias == "B").cpu_ratio_interval
    assert paired is not None
    wide = Interval(paired.center, paired.low * 0.9, paired.high * 1.1, 8, 4, 0.5, df=3.0)
    assert unpaired_cpu_ratio(run, wide) is wide
    one_launch = ResultSet(run.header, tuple(t for t in run.trials if t.spec.launch == 1))
    assert unpaired_cpu_ratio(one_launch, paired) is paired
    assert unpaired_cpu_ratio(run, None) is None


def test_launch_means_are_the_unit() -> None:
    found = [Observation(1, 1, math.e), Observation(1, 2, math.e), Observation(2, 3, 1.0), Observation(2, 4, 1.0)]
    mean, variance, df = launch_mean_error(found)  # type: ignore[misc]
    assert mean == pytest.approx(0.5) and variance == pytest.approx(0.5 / 2) and df == 1.0
    assert launch_mean_error(found[:2]) is None


def _main(b_cpu: float, seed: int = 2) -> ResultSet:
    """A CPU-bound main phase (req/s = 1 / CPU per request), 12 rounds in 4 launches."""
    noise = random.Random(seed)
    trials = []
    for i in range(12):
        for alias, cpu in (("A", 200.0), ("A2", 200.0), ("B", b_cpu)):
            used = cpu * (1 + noise.gauss(0, 0.004))
            trials.append(_trial(alias, i + 1, 3, 1e6 / used * (1 + noise.gauss(0, 0.004)), used))
    return ResultSet(header(), tuple(trials))


def test_b_s_measured_cpu_ratio_is_checked_against_the_sizing_s() -> None:
    sized = Interval(0.98, 0.978, 0.982, 8, 4, 0.001, df=6.0)
    assert reciprocal(sized) == Interval(1 / 0.98, 1 / 0.982, 1 / 0.978, 8, 4, 0.001, df=6.0)
    agrees = calibrate_report(_main(200.0 / 0.98), extra_loops=1, extra_us=1.0, slowdown=0.02, wall_s=60.0,
                              expected=sized)
    assert agrees.cpu_ab_sized == pytest.approx(1 / 0.98, abs=1e-5) and agrees.cpu_ab_holds_sized is True
    # The run: B's CPU rose 3.5%, not the 2% sized; B/A misses, and the CPU says why.
    misses = calibrate_report(_main(200.0 * 1.035), extra_loops=1, extra_us=1.0, slowdown=0.02, wall_s=60.0,
                              expected=sized)
    assert misses.cpu_ab_holds_sized is False and misses.ab_holds_expected is False
    text = render_calibration(misses)
    assert "the sizing expected B/A 1.0204 [1.0183, 1.0225]: DISAGREE" in text


def test_the_results_header_records_the_sizing_s_expectation_with_its_error() -> None:
    from pywebbench.commands.calibrate import _sized_record

    assert _sized_record(None) == {}
    record = _sized_record(Interval(0.98, 0.97, 0.99, 8, 4, 0.0041234567, df=5.4321))
    assert record == {"sized_expected": {"center": 0.98, "low": 0.97, "high": 0.99, "se_log": 0.0041235, "df": 5.43}}
    assert _sized_record(Interval(0.98, 0.97, 0.99, 8, 4, 0.004))["sized_expected"]["df"] is None  # type: ignore[index]


def test_b_spreads_the_sized_loops_over_every_request() -> None:
    """A 2% slowdown of a stack whose probe adds half its CPU per request: B spins about 4% of the
    probe's loops on every request (share 1), not the probe's own on 4% of them; a rare long
    request costs an event loop more than its loops (docs/method.md, the new stacks' runs)."""
    sizing = size_extra_work(_sizing(drift=0.0), 0.02, PROBE)
    assert sizing.share == 1.0
    cost = sizing.cpu_a_us * 0.02 / 0.98  # what B must add per request, in us
    assert sizing.loops * sizing.per_loop_us == pytest.approx(cost, rel=0.01)
    assert 0.03 * PROBE < sizing.loops < 0.05 * PROBE
    expected = expected_ab(sizing)
    assert expected is not None and expected.center == pytest.approx(0.98, abs=0.001)
