"""calibrate's probe in the main phase: the ratio B should show, read in B's own rounds.

The sizing phase reads what a loop costs the app minutes before the main phase. Across 32
interleaved runs B/A scattered about the sizing's expected ratio 1.45 times as far as the two
intervals allow (docs/method.md), B's CPU ratio in the main phase ranging 1.048-1.077 for a sized
1.0526: what a loop costs the app moved between the phases by more than the sizing windows showed.
So an interleaved main phase runs the probe as a fourth variant, P (the sizing probe's loops on
every request), and the expected B/A comes from P's CPU per request over A's in the same rounds.

B is still judged on req/s and P only on the kernel's CPU time, in other processes: B's windows
do not enter the expected value. The check is paired by round (B/A and P/A share A's windows),
so its interval is the one the method would give a per-round figure, launches as the unit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from enum import StrEnum

from pywebbench.analyze.paired import Interval, Observation, ratio_interval
from pywebbench.analyze.pairing import cpu_per_request, figure_ratios, rps_of
from pywebbench.analyze.rows import latest_trials
from pywebbench.results.model import ResultSet, TrialResult

PROBE_ALIAS = "P"


class ExpectedFrom(StrEnum):
    """Where a calibration's expected B/A was read."""

    SIZING = "sizing"
    """The sizing phase, minutes before the main phase (every run before interleaved 33; the duet)."""
    SAME_WINDOWS = "same windows"
    """P in the main phase's own rounds."""

EXTRA_WORK_ENV = "PWB_EXTRA_WORK_LOOPS"
EXTRA_SHARE_ENV = "PWB_EXTRA_WORK_SHARE"


def _env(trials: Sequence[TrialResult], name: str) -> str | None:
    return dict(trials[0].spec.app_env).get(name) if trials else None


def probe_fraction(b: Sequence[TrialResult], p: Sequence[TrialResult]) -> float | None:
    """k: B's extra loops per request on average over P's (share x loops / probe loops)."""
    b_loops, p_loops = _env(b, EXTRA_WORK_ENV), _env(p, EXTRA_WORK_ENV)
    if b_loops is None or p_loops is None or int(p_loops) <= 0:
        return None
    return float(_env(b, EXTRA_SHARE_ENV) or 1.0) * int(b_loops) / int(p_loops)


def expected_from_probe(probe_cpu_ratio: Interval | None, k: float) -> Interval | None:
    """B/A = 1 / (1 + k (r - 1)) for P's CPU ratio r, its interval by the delta method on the log."""
    r = probe_cpu_ratio
    if r is None:
        return None

    def at(ratio: float) -> float:
        return 1.0 / (1.0 + k * max(ratio - 1.0, -0.99 / k))

    slope = k * r.center / (1.0 + k * (r.center - 1.0))
    return replace(r, center=at(r.center), low=at(r.high), high=at(r.low), se_log=slope * r.se_log)


def gap_observations(b_over_a: Sequence[Observation], p_over_a_cpu: Sequence[Observation],
                     k: float) -> tuple[Observation, ...]:
    """Per round: B/A req/s times 1 + k (P/A CPU - 1), which is 1 where B shows what P predicts."""
    cpu = {(o.launch, o.round): o.value for o in p_over_a_cpu}
    out = []
    for o in b_over_a:
        r = cpu.get((o.launch, o.round))
        if r is not None:
            predicted = 1.0 + k * (r - 1.0)
            if predicted > 0:
                out.append(Observation(o.launch, o.round, o.value * predicted))
    return tuple(out)


@dataclass(frozen=True)
class ProbeRead:
    """What P in the main phase says about B: k, and B/A over P's prediction round by round."""

    k: float
    """B's extra loops per request on average over P's (probe_fraction)."""
    gap: Interval | None
    """B/A over the ratio P predicts in the same rounds, with its interval (1 where they agree)."""


def probe_read(results: ResultSet) -> ProbeRead | None:
    """P's reading of B in the run's own rounds; None for a run without P (every run before 33)."""
    by_alias: dict[str, list[TrialResult]] = {}
    trials = latest_trials(results.trials)
    for t in trials:
        by_alias.setdefault(t.spec.alias, []).append(t)
    a, b, p = (by_alias.get(alias, []) for alias in ("A", "B", PROBE_ALIAS))
    k = probe_fraction(b, p)
    if k is None or not a or not math.isfinite(k):
        return None
    rps = figure_ratios(b, a, b[0].spec.label, rps_of, trials)
    cpu = figure_ratios(p, a, p[0].spec.label, cpu_per_request, trials)
    return ProbeRead(k, ratio_interval(gap_observations(rps, cpu, k)))
