"""The calibration page's judgement across runs: the RMS of the runs' normal scores says whether
their intervals have the right width, the geometric mean whether the method is biased."""

from __future__ import annotations

import math
from dataclasses import fields, replace

import numpy as np

from pywebbench.analyze.calibrate import Calibration
from pywebbench.report.pages.calibration import (
    SCORES_NEEDED, CalibrationRun, across_runs, fewest_holds, summary,
)


def _run(i: int, aa_log: float, aa_se: float, ab_log: float, ab_se: float) -> CalibrationRun:
    blank: dict[str, object] = {f.name: None for f in fields(Calibration)}
    blank.update(stack="flask:gunicorn-sync", method="interleaved", rounds=29, launches=15, window_s=4.0,
                 settle_s=0.25, wall_s=590.0, cpu_source="cgroup", injected_slowdown=0.05, extra_loops=1300,
                 extra_us=10.0, aa_ratio=math.exp(aa_log), aa_score=aa_log / aa_se,
                 ab_ratio=0.95 * math.exp(ab_log), ab_expected=0.95, ab_expected_score=ab_log / ab_se,
                 ab_sized=0.95, ab_sized_score=ab_log / ab_se, ab_gap=math.exp(ab_log), ab_expected_from="sizing")
    return CalibrationRun(f"interleaved {i}", Calibration(**blank), 2, 0.5, None, None)  # type: ignore[arg-type]


def _runs(n: int, *, spread: float = 1.0, aa_bias: float = 0.0, ab_bias: float = 0.0) -> list[CalibrationRun]:
    """n runs whose true A/A is 1 and true B/A its expected value, each run's log ratio drawn
    with sd `spread` times the standard error its interval claims."""
    rng = np.random.default_rng(7)  # fixed: at any seed 1 in 20 honest sets of runs falls outside by chance
    out = []
    for i in range(n):
        se_aa, se_ab = rng.uniform(0.005, 0.012, size=2)
        out.append(_run(i, aa_bias + spread * se_aa * rng.standard_normal(), se_aa,
                        ab_bias + spread * se_ab * rng.standard_normal(), se_ab))
    return out


def test_honest_runs_hold_both_checks() -> None:
    text = across_runs(_runs(40))
    assert text.count("holds 1") == 2 and text.count("within") == 2
    assert "MISSES" not in text and "OUTSIDE" not in text


def test_intervals_half_as_wide_as_the_noise_are_caught_by_the_rms() -> None:
    text = across_runs(_runs(40, spread=2.0))
    assert text.count("OUTSIDE") == 2


def test_a_bias_the_single_runs_mostly_hold_is_caught_by_the_mean() -> None:
    """A 0.6% shift at a per-run se of about 0.9% moves each run by under one se (most still
    hold), but 40 runs together place the mean 4 standard errors off."""
    text = across_runs(_runs(40, ab_bias=-0.006))
    aa, ab = text.split(". B/A")
    assert "holds 1" in aa and "MISSES" in ab


def test_too_few_runs_say_nothing() -> None:
    assert across_runs(_runs(SCORES_NEEDED - 1)) == ""


def test_runs_with_the_probe_in_the_same_rounds_are_judged_apart_from_the_sizing() -> None:
    """From run 33 the expected B/A comes from P in the main phase: those runs get their own
    sentence, and every run keeps its sizing's judgement."""
    runs = _runs(12)
    runs = runs[:6] + [replace(r, figures=replace(r.figures, ab_expected_from="same windows")) for r in runs[6:]]
    text = across_runs(runs)
    assert "B/A over the ratio its sizing expected across 12 runs" in text
    assert "B/A over the ratio P predicted in the same rounds across 6 runs" in text


def test_the_fewest_holds_is_the_binomial_five_percent_floor() -> None:
    """Honest 95% intervals fall under the floor in at most 5% of series, and one hold more would
    make that more than 5%: the floor is as high as the claim allows."""
    rng = np.random.default_rng(11)
    for n in (5, 12, 19, 44, 60):
        floor = fewest_holds(n)
        series = rng.binomial(n, 0.95, size=40_000)
        assert np.mean(series < floor) <= 0.05 + 0.004
        assert np.mean(series < floor + 1) > 0.05
    assert (fewest_holds(12), fewest_holds(19), fewest_holds(44)) == (10, 16, 39)


def test_the_summary_judges_the_a_a_count_against_the_floor() -> None:
    runs = _runs(44)
    held = [replace(r, figures=replace(r.figures, aa_contains_one=i >= 3)) for i, r in enumerate(runs)]
    assert "holding 1 in 41 of 44 (39 or more if it covers 95% of the time: within)" in summary(
        held, mde_target=0.05, wall_limit_s=600)
    missed = [replace(r, figures=replace(r.figures, aa_contains_one=i >= 6)) for i, r in enumerate(runs)]
    assert "holding 1 in 38 of 44 (39 or more if it covers 95% of the time: FEWER)" in summary(
        missed, mde_target=0.05, wall_limit_s=600)
