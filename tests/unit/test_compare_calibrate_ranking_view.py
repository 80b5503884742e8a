"""compare, calibrate and the sweep ranking view, from stored result sets with known answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pywebbench.calibrate import calibrate_report
from pywebbench.compare import compare_results, render_comparison
from pywebbench.loadgen.fake import synthetic_result
from pywebbench.report.ranking_view import render_ranking, sweep_views
from pywebbench.results.model import ResourceUsage, ResultSet, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import load_results
from support.builders import header, stack
from support.results_fixture import write_results


def _scaled(results: ResultSet, factor: float, only: str) -> ResultSet:
    trials = []
    for t in results.trials:
        if t.spec.stack_id == only and t.load is not None:
            t = replace(t, load=replace(t.load, requests=int(t.load.requests * factor)))
        trials.append(t)
    return replace(results, trials=tuple(trials))


def test_the_same_results_compare_as_within_noise_and_a_real_change_as_significant(tmp_path: Path) -> None:
    before = load_results(write_results(tmp_path / "a"))
    same = compare_results(before, before)
    assert same.changes and not same.significant
    assert {c.verdict for c in same.changes} <= {"within noise", "no interval"}
    after = _scaled(before, 1.5, "starlette:uvicorn")
    changed = compare_results(before, after)
    faster = [c for c in changed.significant if c.stack == "starlette:uvicorn"]
    assert faster and all(c.verdict == "faster" and c.rps_change is not None and c.rps_change > 0.4
                          for c in faster)
    assert "faster" in render_comparison(changed)


def _calibration_trial(alias: str, round_no: int, rps: float, cpu_us: float) -> TrialResult:
    spec = TrialSpec(f"r{round_no}-x#{alias}", "flask:gunicorn-sync", "hello", 100, 5.0, 1.0, round_no, "wrk",
                     alias=alias)
    load = synthetic_result(rps, 5.0)
    app = ResourceUsage("app", cpu_s=cpu_us * load.requests / 1e6, peak_rss_mb=50.0, processes=4, window_s=5.0)
    return TrialResult(spec, stack("flask:gunicorn-sync"), TrialStatus.OK, "", "", load=load, resources=(app,))


def test_calibration_reports_noise_power_and_a_detected_slowdown() -> None:
    a = [1000.0, 1020.0, 980.0, 1010.0, 990.0]
    a2 = [1005.0, 995.0, 1015.0, 985.0, 1000.0]
    b = [900.0, 910.0, 890.0, 905.0, 895.0]  # 10% slower: plainly outside the noise above
    trials = [_calibration_trial(alias, i + 1, rps, cpu)
              for alias, values, cpu in (("A", a, 250.0), ("A2", a2, 251.0), ("B", b, 275.0))
              for i, rps in enumerate(values)]
    report = calibrate_report(ResultSet(header(), tuple(trials)), extra_us=25.0)
    assert report.repeats == 5
    assert report.aa_ratio_ci is not None and report.aa_ratio_ci[0] <= 1.0 <= report.aa_ratio_ci[1]
    assert report.noise_cv is not None and 0.01 < report.noise_cv < 0.02
    assert report.min_difference is not None and report.min_difference < 0.05
    assert report.detected is True and report.ab_ratio is not None and abs(report.ab_ratio - 0.9) < 0.01
    assert report.cpu_us_per_req_b is not None and report.cpu_us_per_req_a is not None
    assert round(report.cpu_us_per_req_b - report.cpu_us_per_req_a) == 25
    assert "detected" in report.render()


def test_ranking_view_finds_the_flip_in_a_connections_sweep(tmp_path: Path) -> None:
    results = load_results(write_results(tmp_path / "a"))
    views = {v.workload: v for v in sweep_views(results)}
    db = views["db"]
    assert db.knobs == ("connections",)
    assert db.points == ("connections=25", "connections=50", "connections=100")
    text = render_ranking(results)
    assert "Kendall tau" in text and "swap places" in text
    assert "flask:gunicorn-gevent 1,193 ahead of starlette:uvicorn 1,132, then 2,250 behind 2,351 req/s" in text
    hello = views["hello"]
    assert hello.metric == "p99 ms"  # open loop ranks by latency: every stack achieves the offered rate
