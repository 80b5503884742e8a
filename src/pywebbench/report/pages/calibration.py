"""Calibrate runs as table rows: statistics re-derived from each run's committed windows.

A run directory holds results.jsonl (every window) and calibration.json (what `calibrate
--json` printed). The intervals are computed again from the windows with this pywebbench, so
a corrected rule reaches old runs; the run's own facts (the loops B spun, the slowdown asked,
the wall time, its measured share) come from calibration.json.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from scipy.special import chdtri
from scipy.stats import binom

from pywebbench.analyze.pairing import paired_to_baseline
from pywebbench.analyze.calibrate_probe import EXTRA_WORK_ENV, ExpectedFrom
from pywebbench.analyze.calibrate import (
    Calibration, calibrate_report, expected_ab, size_extra_work,
)
from pywebbench.analyze.moderation import mean_half_width
from pywebbench.analyze.paired import Interval, Observation, level_variances
from pywebbench.core.errors import UserError
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import TrialResult
from pywebbench.results.store import load_results


@dataclass(frozen=True)
class CalibrationRun:
    name: str
    """`interleaved 3`: the method folder and the run's number."""
    figures: Calibration
    rounds_per_launch: object
    warmup_s: object
    launch_sd: float | None
    round_sd: float | None
    pairs: str = ""
    """Duet only: `every pair` (each round loads all pairs) or `star` (each stack beside A; runs 1-7)."""
    by_position: tuple[float, ...] = ()
    """Geometric mean of A2/A over the rounds at each position in their launch (first, second, ...)."""
    python: str = "-"
    """The interpreter the stacks ran on, as the header names it (`3.11.2 at /usr`)."""


def load_run(path: Path) -> CalibrationRun:
    printed = json.loads((path / "calibration.json").read_text())
    results = load_results(path / "results.jsonl")
    figures = calibrate_report(
        results, extra_loops=printed["extra_loops"], extra_us=printed["extra_us"],
        slowdown=printed["injected_slowdown"], wall_s=printed["wall_s"], loop_cost_us=printed.get("loop_cost_us"),
        extra_share=printed.get("extra_share", 1.0),
        expected=_expected(path, printed),
        measured_share=printed.get("measured_share"), main_measured_share=printed.get("main_measured_share"),
    )
    options = results.header.options
    a = [t for t in results.trials if t.spec.alias == "A"]
    a2 = [t for t in results.trials if t.spec.alias == "A2"]
    ratios = paired_to_baseline(a2, a, a2[0].spec.label, results.trials).ratios if a and a2 else ()
    levels = level_variances(ratios) if ratios else None
    return CalibrationRun(
        name=f"{path.parent.name} {path.name}", figures=figures,
        rounds_per_launch=options.get("rounds_per_launch", "-"), warmup_s=options.get("warmup_s", options.get("warmup", "-")),
        launch_sd=None if levels is None else math.sqrt(levels[0]),
        round_sd=None if levels is None else math.sqrt(levels[1]),
        pairs=_pairs(results.trials), by_position=by_position(ratios),
        python=str(results.header.tools.get("python", "-")),
    )


def _expected(path: Path, printed: dict[str, Any]) -> Interval | None:
    """The B/A the run's sizing windows say its loops give (analyze.calibrate.expected_ab),
    re-derived from the committed sizing.jsonl; None without one or without a probe."""
    if not (path / "sizing.jsonl").exists():
        return None
    sized = load_results(path / "sizing.jsonl")
    probe = next((t for t in sized.trials if t.spec.alias == "B"), None)
    probe_loops = int(dict(probe.spec.app_env).get(EXTRA_WORK_ENV, "0")) if probe is not None else 0
    if probe_loops <= 0:
        return None
    try:
        sizing = size_extra_work(sized, printed["injected_slowdown"], probe_loops)
    except UserError:
        return None
    return expected_ab(replace(sizing, loops=int(printed["extra_loops"]), share=printed.get("extra_share", 1.0)))


def by_position(ratios: tuple[Observation, ...]) -> tuple[float, ...]:
    """The geometric mean ratio of the rounds at each position in their launch."""
    rounds: dict[int, list[Observation]] = {}
    for obs in ratios:
        rounds.setdefault(obs.launch, []).append(obs)
    at: dict[int, list[float]] = {}
    for launch in rounds.values():
        for i, obs in enumerate(sorted(launch, key=lambda o: o.round)):
            at.setdefault(i, []).append(math.log(obs.value))
    return tuple(math.exp(sum(v) / len(v)) for _, v in sorted(at.items()))


def _pairs(trials: tuple[TrialResult, ...]) -> str:
    """How a duet run paired its stacks: around A only, or every pair."""
    if not any(strategy_of(t.spec.method).side_by_side for t in trials):
        return ""
    return "star" if all("A" in (t.spec.alias, t.spec.partner.rpartition("#")[2]) for t in trials) else "every pair"


def load_runs(root: Path) -> list[CalibrationRun]:
    """Every run under a method folder, in run-number order."""
    dirs = [p for p in root.iterdir() if (p / "calibration.json").exists()] if root.is_dir() else []
    return [load_run(p) for p in sorted(dirs, key=lambda p: (len(p.name), p.name))]


HEADER = ("| run | stack (A req/s, Python) | rounds per launch / warmup (duet pairs) | rounds | launches | wall | measured "
          "| A2/A [95% CI] | A/A holds 1 | injected (measured) | B/A [95% CI] | detected | expected B/A (from) "
          "| B/A holds it | B's CPU ratio: measured, the sizing's (agree) | mde | launch sd | round sd |\n"
          "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")


def percent(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}%}"


def _ci(ratio: float | None, ci: tuple[float, float] | None) -> str:
    if ratio is None or ci is None:
        return "-"
    return f"{ratio:.4f} [{ci[0]:.4f}, {ci[1]:.4f}]"


def row(run: CalibrationRun) -> str:
    c = run.figures
    a, b = c.cpu_us_per_req_a, c.cpu_us_per_req_b
    by_cpu = None if a is None or not b else 1 - a / b
    pairs = f", {run.pairs}" if run.pairs else ""
    holds = "-" if c.ab_holds_expected is None else "yes" if c.ab_holds_expected else "NO"
    rps = f"{c.rps_a:,.0f}" if c.rps_a is not None else "-"
    return (f"| {run.name} | {c.stack} ({rps}, {run.python}) | {run.rounds_per_launch} / {run.warmup_s} s{pairs} | "
            f"{c.rounds} | {c.launches} | "
            f"{c.wall_s / 60:.1f} min | {percent(c.main_measured_share)} | {_ci(c.aa_ratio, c.aa_ci)} | "
            f"{'yes' if c.aa_contains_one else 'NO'} | {c.injected_slowdown:.0%} ({percent(by_cpu)} by CPU) | "
            f"{_ci(c.ab_ratio, c.ab_ci)} | {'yes' if c.detected else 'NO'} | {_ci(c.ab_expected, c.ab_expected_ci)}{_source(c)} | "
            f"{holds} | {_cpu_check(c)} | {percent(c.mde)} | {percent(run.launch_sd)} | {percent(run.round_sd)} |")


def _cpu_check(c: Calibration) -> str:
    """B's CPU per request over A's in the main phase beside the sizing's expected one: where
    B/A misses, whether the loops cost the app what the sizing read."""
    if c.cpu_ab_ratio is None or c.cpu_ab_sized is None:
        return "-"
    agree = "-" if c.cpu_ab_holds_sized is None else "yes" if c.cpu_ab_holds_sized else "NO"
    return f"{_ci(c.cpu_ab_ratio, c.cpu_ab_ci)} against {_ci(c.cpu_ab_sized, c.cpu_ab_sized_ci)} ({agree})"


def _source(c: Calibration) -> str:
    if c.ab_expected is None:
        return ""
    return " (P, same rounds)" if c.ab_expected_from == ExpectedFrom.SAME_WINDOWS else " (sizing)"


def table(runs: list[CalibrationRun]) -> str:
    return "\n".join([HEADER, *(row(r) for r in runs)])


def summary(runs: list[CalibrationRun], *, mde_target: float, wall_limit_s: float) -> str:
    """One sentence a reader checks the issue's targets against."""
    if not runs:
        return "No run committed yet."
    n = len(runs)
    figures = [r.figures for r in runs]
    detected = sum(1 for c in figures if c.detected)
    holds = sum(1 for c in figures if c.aa_contains_one)
    mdes = [c.mde for c in figures if c.mde is not None]
    within = sum(1 for c in figures if c.wall_s <= wall_limit_s)
    small = sum(1 for m in mdes if m <= mde_target)
    shares = [c.main_measured_share for c in figures if c.main_measured_share is not None]
    text = (f"{n} runs: the slowdown detected in {detected} of {n}, the A/A interval holding 1 in "
            f"{_held(holds, n)}, {within} of {n} within {wall_limit_s / 60:g} minutes of wall time")
    if mdes:
        text += (f", a smallest detectable difference of {min(mdes):.1%}-{max(mdes):.1%} "
                 f"({small} of {len(mdes)} at or under {mde_target:.0%})")
    if shares:
        text += f", {min(shares):.1%}-{max(shares):.1%} of the main phase's wall time in measured windows"
    for source, words in ((ExpectedFrom.SIZING, "its sizing expected"),
                          (ExpectedFrom.SAME_WINDOWS, "P predicted in the same rounds")):
        judged = [c.ab_holds_expected for c in figures
                  if c.ab_holds_expected is not None and c.ab_expected_from == source]
        if judged:
            text += f", B/A holding the ratio {words} in {_held(sum(judged), len(judged))}"
    cpu = [c.cpu_ab_holds_sized for c in figures if c.cpu_ab_holds_sized is not None]
    if cpu:
        text += (f", B's CPU ratio in the main phase agreeing with the sizing's (both errors combined) in "
                 f"{_held(sum(cpu), len(cpu))}")
    return text + "."


COVERAGE = 0.95


def fewest_holds(n: int, coverage: float = COVERAGE) -> int:
    """The fewest of n runs an interval that covers `coverage` of the time holds in, in all but 5%
    of series (one-sided binomial): fewer is evidence it covers less. At 95% the misses of 44 honest
    runs reach 5 one series in 15, so "all but one" is a bar an honest interval fails more often than not."""
    return int(binom.ppf(0.05, n, coverage))


def _held(holds: int, n: int) -> str:
    floor = fewest_holds(n)
    verdict = "within" if holds >= floor else "FEWER"
    return f"{holds} of {n} ({floor} or more if it covers {COVERAGE:.0%} of the time: {verdict})"


SCORES_NEEDED = 5
"""Runs before the scores' spread says anything: with fewer, an RMS of 1 spans 0.4-1.6."""


def across_runs(runs: list[CalibrationRun]) -> str:
    """Whether the runs' intervals have the right width and no bias, judged across runs, where
    one run's hold or miss cannot tell: each run's log ratio over its own standard error as a
    normal score (analyze.calibrate.normal_score). Right width: the scores' RMS is 1 within its
    chi-square range for that many runs; no bias: the geometric mean ratio, with Student's t over
    the runs (each run one value, independent of the others), holds the truth."""
    sentences = []
    for label, truth, pairs in (
        ("A2/A", "1", [(c.aa_ratio, c.aa_score) for c in (r.figures for r in runs)]),
        ("B/A over the ratio its sizing expected", "1",
         [(c.ab_ratio / c.ab_sized if c.ab_ratio and c.ab_sized else None, c.ab_sized_score)
          for c in (r.figures for r in runs)]),
        ("B/A over the ratio P predicted in the same rounds", "1",
         [(c.ab_gap, c.ab_expected_score) for c in (r.figures for r in runs) if c.ab_expected_from == ExpectedFrom.SAME_WINDOWS]),
    ):
        judged = [(ratio, score) for ratio, score in pairs if ratio is not None and score is not None]
        if len(judged) < SCORES_NEEDED:
            continue
        n = len(judged)
        mean, half = mean_half_width([math.log(ratio) for ratio, _ in judged])
        rms = math.sqrt(sum(score ** 2 for _, score in judged) / n)
        low, high = (math.sqrt(float(chdtri(n, q)) / n) for q in (0.975, 0.025))
        sentences.append(
            f"{label} across {n} runs: geometric mean {math.exp(mean):.4f} [{math.exp(mean - half):.4f}, "
            f"{math.exp(mean + half):.4f}] (Student's t over the runs; {'holds' if abs(mean) <= half else 'MISSES'} "
            f"{truth}), RMS normal score {rms:.2f} ({low:.2f}-{high:.2f} if every run's interval has the right "
            f"width: {'within' if low <= rms <= high else 'OUTSIDE'})")
    return ". ".join(sentences) + "." if sentences else ""
