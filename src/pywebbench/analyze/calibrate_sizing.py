"""How well calibrate's sizing phase knows the probe's CPU ratio, honestly.

The sizing reads r, B's CPU per request over A's with the probe spun, and B's loops are sized
from it. Its paired interval (each round's B over the same round's A) cancels what the two
shared in those minutes, so it claimed about ten times the precision the sizing had: a duet
calibration of falcon:uvicorn expected B/A 0.980 [0.9794, 0.9806] and B's CPU per request then
rose 3.7% [2.7%, 4.8%] in the main phase, not the 2% sized (issue 46). What B carries into the
main phase is each side's own cost, not their shared drift, so r's error here is A's and B's
CPU per request taken as independent means over the sizing's launches (rounds of a launch share
its effect, so launches are the unit), never less than the paired error, on Satterthwaite's df.
The expected B/A inherits it through calibrate_probe.expected_from_probe.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from pywebbench.analyze.moderation import satterthwaite_df, t_quantile
from pywebbench.analyze.paired import Interval, Observation
from pywebbench.analyze.pairing import cpu_per_request, observations
from pywebbench.analyze.rows import latest_trials
from pywebbench.results.model import ResultSet, TrialResult


def launch_mean_error(found: Sequence[Observation]) -> tuple[float, float, float] | None:
    """The mean of a side's launch means of log values, its squared standard error and df
    (launches - 1); None below two launches."""
    by_launch: dict[int, list[float]] = {}
    for o in found:
        by_launch.setdefault(o.launch, []).append(math.log(o.value))
    means = [sum(v) / len(v) for v in by_launch.values()]
    n = len(means)
    if n < 2:
        return None
    mean = sum(means) / n
    return mean, sum((m - mean) ** 2 for m in means) / (n - 1) / n, float(n - 1)


def _side(trials: Sequence[TrialResult], alias: str) -> list[Observation]:
    return observations([t for t in trials if t.spec.alias == alias], cpu_per_request)


def unpaired_cpu_ratio(results: ResultSet, paired: Interval | None, confidence: float = 0.95) -> Interval | None:
    """B's CPU per request over A's in the sizing windows, its error A's and B's own (module
    docstring); the paired interval where either side has fewer than two launches."""
    trials = latest_trials(results.trials)
    a, b = (launch_mean_error(_side(trials, alias)) for alias in ("A", "B"))
    if paired is None or a is None or b is None:
        return paired
    own = a[1] + b[1]
    if own <= paired.se_log ** 2:
        return paired
    se, df = math.sqrt(own), satterthwaite_df((a[1], a[2]), (b[1], b[2]))
    half = t_quantile(df, confidence) * se
    centre = math.log(paired.center)
    return replace(paired, low=math.exp(centre - half), high=math.exp(centre + half), se_log=se, df=df,
                   prior_df=0.0, confidence=confidence)


def reciprocal(interval: Interval | None) -> Interval | None:
    """1 / the interval: the expected B/A req/s as the expected B/A CPU per request (a CPU-bound
    stack serves requests as fast as its CPU per request allows)."""
    if interval is None:
        return None
    return replace(interval, center=1.0 / interval.center, low=1.0 / interval.high, high=1.0 / interval.low)
