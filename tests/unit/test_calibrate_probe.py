"""calibrate's probe in the main phase: B's expected ratio read from P in B's own rounds."""

from __future__ import annotations

import math
import random

import pytest

from pywebbench.analyze.calibrate import calibrate_report
from pywebbench.analyze.calibrate_probe import (
    EXTRA_SHARE_ENV, EXTRA_WORK_ENV, expected_from_probe, gap_observations, probe_fraction,
)
from pywebbench.analyze.paired import Interval, Observation
from pywebbench.report.calibration import render_calibration
from pywebbench.results.model import ResourceUsage, ResultSet, TrialResult, TrialSpec, TrialStatus
from support.builders import header, stack
from support.fake_loadgen import synthetic_result

PROBE_LOOPS, B_LOOPS, B_SHARE = 14_000, 14_000, 0.09
K = B_SHARE * B_LOOPS / PROBE_LOOPS


def _trial(alias: str, round_no: int, rps: float, cpu_us: float, env: tuple[tuple[str, str], ...]) -> TrialResult:
    spec = TrialSpec(f"r{round_no}-x#{alias}", "flask:gunicorn-sync", "hello", 100, 5.0, 1.0, round_no, "wrk",
                     alias=alias, method="interleaved", launch=1 + (round_no - 1) // 5, settle_s=0.5, app_env=env)
    load = synthetic_result(rps, 5.0)
    app = ResourceUsage("app", cpu_s=cpu_us * load.requests / 1e6, peak_rss_mb=50.0, processes=4, window_s=5.0)
    return TrialResult(spec, stack("flask:gunicorn-sync"), TrialStatus.OK, "", "", load=load, resources=(app,),
                       cpu_source="cgroup-v1")


def _run(b_off: float, seed: int = 3, rounds: int = 30) -> ResultSet:
    """A CPU-bound stack (req/s = 1 / CPU per request) whose loop cost drifts over the run by
    +-15%, the same for B and P in a round; B is slower than P predicts by `b_off`."""
    noise = random.Random(seed)
    b_env = ((EXTRA_WORK_ENV, str(B_LOOPS)), (EXTRA_SHARE_ENV, f"{B_SHARE:.6f}"))
    p_env = ((EXTRA_WORK_ENV, str(PROBE_LOOPS)),)
    trials = []
    for i in range(rounds):
        a_cpu, probe_extra = 160.0, 100.0 * (1 + 0.15 * math.sin(i / 5))
        costs = {"A": (a_cpu, ()), "A2": (a_cpu, ()), "B": (a_cpu + K * probe_extra, b_env),
                 "P": (a_cpu + probe_extra, p_env)}
        for alias, (cpu, env) in costs.items():
            slower = (1 + b_off) if alias == "B" else 1.0
            rps = 1e6 / (cpu * slower) * (1 + noise.gauss(0, 0.01))
            trials.append(_trial(alias, i + 1, rps, cpu * (1 + noise.gauss(0, 0.005)), env))
    return ResultSet(header(), tuple(trials))


def _interval(center: float, se: float) -> Interval:
    half = 1.96 * se
    return Interval(center, center * math.exp(-half), center * math.exp(half), 20, 6, se)


def test_b_agrees_with_the_probe_in_its_own_rounds_where_the_sizing_missed() -> None:
    sized = _interval(0.975, 0.002)  # minutes before, a loop cost less: the sizing expects too little
    report = calibrate_report(_run(b_off=0.0), extra_loops=B_LOOPS, extra_us=9.0, slowdown=0.05, wall_s=100.0,
                              extra_share=B_SHARE, expected=sized)
    assert report.ab_expected_from == "same windows"
    assert report.ab_holds_expected is True and report.ab_gap == pytest.approx(1.0, abs=0.01)
    assert report.ab_expected is not None and report.ab_ratio == pytest.approx(report.ab_expected, abs=0.01)
    assert report.ab_sized == 0.975 and report.ab_holds_sized is False
    assert report.ab_expected_score is not None and abs(report.ab_expected_score) < 1.96
    assert "from P, the probe, in the same rounds: B/A agrees" in render_calibration(report)


def test_a_b_slower_than_the_probe_predicts_disagrees() -> None:
    report = calibrate_report(_run(b_off=0.03), extra_loops=B_LOOPS, extra_us=9.0, slowdown=0.05, wall_s=100.0,
                              extra_share=B_SHARE)
    assert report.ab_holds_expected is False and report.ab_gap is not None and report.ab_gap < 0.98
    assert report.ab_expected_score is not None and report.ab_expected_score < -1.96
    assert report.ab_sized is None and report.ab_holds_sized is None


def test_without_a_probe_the_sizing_is_the_expectation() -> None:
    run = _run(b_off=0.0)
    no_probe = ResultSet(run.header, tuple(t for t in run.trials if t.spec.alias != "P"))
    sized = _interval(0.95, 0.002)
    report = calibrate_report(no_probe, extra_loops=B_LOOPS, extra_us=9.0, slowdown=0.05, wall_s=100.0,
                              extra_share=B_SHARE, expected=sized)
    assert report.ab_expected_from == "sizing" and report.ab_expected == 0.95
    assert report.ab_holds_expected == report.ab_holds_sized


def test_the_probe_fraction_and_the_per_round_gap() -> None:
    run = _run(b_off=0.0)
    b = [t for t in run.trials if t.spec.alias == "B"]
    p = [t for t in run.trials if t.spec.alias == "P"]
    assert probe_fraction(b, p) == pytest.approx(K)
    assert probe_fraction(b, []) is None
    gaps = gap_observations([Observation(1, 1, 0.95), Observation(1, 2, 0.90)],
                            [Observation(1, 1, 1.0 + 0.05 / 0.95 / 0.1), Observation(2, 9, 1.5)], 0.1)
    assert [(o.round, round(o.value, 6)) for o in gaps] == [(1, 1.0)]  # a round without P's window drops


def test_the_expected_ratio_from_the_probe_carries_its_interval() -> None:
    probe = _interval(1.6, 0.01)
    expected = expected_from_probe(probe, 0.09)
    assert expected is not None and expected.center == pytest.approx(1 / (1 + 0.09 * 0.6))
    assert expected.low < expected.center < expected.high
    assert expected.se_log == pytest.approx(0.09 * 1.6 / (1 + 0.09 * 0.6) * 0.01)
    assert expected_from_probe(None, 0.09) is None
