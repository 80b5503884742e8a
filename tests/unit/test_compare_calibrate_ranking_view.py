"""compare, calibrate and the sweep ranking view, from stored result sets with known answers."""

from __future__ import annotations

import json
import math
import random
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.calibrate import calibrate_report
from pywebbench.analyze.compare import compare_results
from pywebbench.report.calibration import render_calibration
from pywebbench.cli import main
from pywebbench.report.comparison import render_comparison, render_comparison_markdown
from support.fake_loadgen import synthetic_result
from pywebbench.report.ranking_view import render_ranking, sweep_views
from pywebbench.results.model import ResourceUsage, ResultSet, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter, load_results, results_path
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


def _store(results: ResultSet, run_dir: Path) -> Path:
    writer = ResultsWriter(results_path(run_dir), results.header)
    for trial in results.trials:
        writer.add_trial(trial)
    writer.finish("complete")
    writer.close()
    return run_dir


def test_the_regression_gate_fails_on_a_significant_slowdown_past_its_threshold(tmp_path: Path) -> None:
    before = load_results(write_results(tmp_path / "a"))
    slower = _scaled(before, 0.5, "starlette:uvicorn")
    comparison = compare_results(before, slower)
    hit = comparison.regressions(0.05)
    assert hit and {r.change.stack for r in hit} == {"starlette:uvicorn"}
    assert "req/s" in {r.figure for r in hit}
    # 50% slower is not past a 60% threshold; the same CPU over half the requests is +100% CPU/req
    assert {r.figure for r in comparison.regressions(0.6)} == {"CPU/req"}
    assert comparison.regressions(1.5) == ()
    assert compare_results(before, before).regressions(0.05) == ()
    assert "| starlette:uvicorn |" in render_comparison_markdown(comparison)
    same_dir, slower_dir = tmp_path / "a", _store(slower, tmp_path / "b")
    assert main(["compare", str(same_dir), str(slower_dir), "--fail-on-regression", "5%"]) == 1
    assert main(["compare", str(same_dir), str(same_dir), "--fail-on-regression", "5%"]) == 0
    assert main(["compare", str(same_dir), str(slower_dir), "--markdown"]) == 0


def _worse(results: ResultSet, only: str, *, p99: float = 1.0, cpu: float = 1.0) -> ResultSet:
    """The same windows with `only`'s latency percentiles and app CPU multiplied (req/s unchanged)."""
    trials = []
    for t in results.trials:
        if t.spec.stack_id == only and t.load is not None:
            latency = t.load.latency
            latency = replace(latency, percentiles=tuple((p, ms * p99) for p, ms in latency.percentiles))
            t = replace(t, load=replace(t.load, latency=latency),
                        resources=tuple(replace(u, cpu_s=u.cpu_s * cpu) if u.role == "app" else u
                                        for u in t.resources))
        trials.append(t)
    return replace(results, trials=tuple(trials))


def test_the_regression_gate_fails_on_p99_up_and_on_cpu_per_request_up(tmp_path: Path) -> None:
    before = load_results(write_results(tmp_path / "a"))
    assert any(t.usage("app") for t in before.trials)  # the fixture records the app's CPU
    slow_tail = compare_results(before, _worse(before, "starlette:uvicorn", p99=1.5)).regressions(0.05)
    assert {(r.change.stack, r.figure) for r in slow_tail} == {("starlette:uvicorn", "p99")}
    assert slow_tail[0].delta > 0.4 and slow_tail[0].interval[0] > 1 and "p99 +50.0%" in slow_tail[0].line
    costly = compare_results(before, _worse(before, "starlette:uvicorn", cpu=1.3)).regressions(0.05)
    assert {(r.change.stack, r.figure) for r in costly} == {("starlette:uvicorn", "CPU/req")}
    assert compare_results(before, _worse(before, "starlette:uvicorn", cpu=1.3)).regressions(0.4) == ()
    better = _worse(before, "starlette:uvicorn", p99=0.5, cpu=0.5)
    assert compare_results(before, better).regressions(0.05) == ()  # faster and cheaper is no regression


def test_compare_takes_format_markdown_as_reports_spelling(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    run = str(write_results(tmp_path / "a"))
    assert main(["compare", run, run, "--format", "markdown"]) == 0
    assert "| Stack | Workload |" in capsys.readouterr().out
    assert main(["compare", run, run, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["changes"]


def _calibration_trial(alias: str, round_no: int, rps: float, cpu_us: float) -> TrialResult:
    spec = TrialSpec(f"r{round_no}-x#{alias}", "flask:gunicorn-sync", "hello", 100, 5.0, 1.0, round_no, "wrk",
                     alias=alias, method="interleaved", launch=1 + (round_no - 1) // 10, settle_s=0.5)
    load = synthetic_result(rps, 5.0)
    app = ResourceUsage("app", cpu_s=cpu_us * load.requests / 1e6, peak_rss_mb=50.0, processes=4, window_s=5.0)
    return TrialResult(spec, stack("flask:gunicorn-sync"), TrialStatus.OK, "", "", load=load, resources=(app,),
                       cpu_source="cgroup-v1")


def test_calibration_pairs_rounds_so_drift_cancels_and_a_5pct_slowdown_is_detected() -> None:
    # The machine's speed drifts by +-20% over the run; within a round A, A2 and B see the
    # same speed (with 1% noise), and B is 5% slower: pairing must see it, drift or not.
    rounds = 30
    speed = [1000.0 * (1 + 0.2 * math.sin(i / 4)) for i in range(rounds)]
    noise = random.Random(1)
    trials = [
        _calibration_trial(alias, i + 1, speed[i] * factor * (1 + noise.gauss(0, 0.01)), cpu)
        for i in range(rounds)
        for alias, factor, cpu in (("A", 1.0, 250.0), ("A2", 1.0, 250.0), ("B", 0.95, 263.0))
    ]
    report = calibrate_report(ResultSet(header(), tuple(trials)), extra_loops=650, extra_us=13.0, slowdown=0.05,
                              wall_s=100.0)
    assert report.rounds == rounds and report.launches == 3
    assert report.aa_ci is not None and report.aa_contains_one is True
    assert report.detected is True and report.ab_ratio is not None and abs(report.ab_ratio - 0.95) < 0.01
    assert report.ab_within_expected is True
    assert report.mde is not None and report.mde < 0.03
    assert report.injected_measured_us is not None and round(report.injected_measured_us) == 13
    assert "detected" in render_calibration(report)
    assert set(json.loads(report.to_json())) >= {"aa_ratio", "aa_ci", "ab_ratio", "ab_ci", "injected_slowdown",
                                                 "detected", "mde", "rounds", "wall_s"}


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
