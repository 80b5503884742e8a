"""How often Kendall's tau's bootstrap interval (agreement.tau_interval) holds the true tau, by
simulation at seed 000's shape: 3 or 4 launches a stack in each of two independent runs.

A bootstrap over 3-4 launches resamples 3-4 values: each resample draws only from what the run
happened to show, so a percentile interval is narrower than the sampling spread it stands for
(the launches' own variance times (n - 1) / n, and a tau of noisy ranks is biased towards 0 where
neighbours lie within the noise). Nothing proved it held 95%; this measures it. The truth is the
committed runs' own ranking (each stack's mean log ratio in each column) and each column's
window noise its median sd across stacks, so the shape and the spacing are seed 000's.

`python -m pywebbench.analyze.tau_coverage docs/results` writes docs/results/coverage/tau.json;
the seed 000 page states its figures next to the tau.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from pywebbench.analyze.agreement import kendall_tau_b, round_ratios, tau_interval
from pywebbench.analyze.paired import Observation
from pywebbench.analyze.rows import summarize
from pywebbench.results.store import load_results

BASELINE = "flask:gunicorn-sync"
COLUMNS = ("seed000-better-async", "seed000-better-sync")
RELATIVE = Path("coverage") / "tau.json"


@dataclass(frozen=True)
class TauCoverage:
    launches: int
    rounds_per_launch: int
    runs: int
    intervals: int
    covered: int
    median_width: float | None

    @property
    def coverage(self) -> float | None:
        return self.covered / self.intervals if self.intervals else None


def _column(truth: Mapping[str, float], sd: float, launches: int, rounds: int,
            rng: np.random.Generator) -> dict[str, tuple[Observation, ...]]:
    """One run's per-round ratios to the baseline: truth plus window noise, round r of launch l."""
    return {stack: tuple(Observation(launch, launch * rounds + r, math.exp(mean + rng.normal(0.0, sd)))
                         for launch in range(1, launches + 1) for r in range(rounds))
            for stack, mean in truth.items()}


def simulate(first: Mapping[str, float], second: Mapping[str, float], sd_first: float, sd_second: float,
             launches: int, *, rounds_per_launch: int = 1, runs: int = 200, resamples: int = 1000,
             seed: int = 0) -> TauCoverage:
    """`runs` pairs of independent runs of the stacks in both truths (log ratios to the baseline,
    which counts as 0 in both), each scored on whether tau_interval holds the truths' tau-b."""
    stacks = sorted(set(first) & set(second))
    truth = kendall_tau_b([*(first[s] for s in stacks), 0.0], [*(second[s] for s in stacks), 0.0])
    rng = np.random.default_rng(seed)
    covered = intervals = 0
    widths = []
    for n in range(runs):
        got = tau_interval(_column({s: first[s] for s in stacks}, sd_first, launches, rounds_per_launch, rng),
                           _column({s: second[s] for s in stacks}, sd_second, launches, rounds_per_launch, rng),
                           [*stacks, BASELINE], BASELINE, resamples=resamples, seed=seed * 100_003 + n)
        if got is None or truth is None:
            continue
        intervals += 1
        covered += got.low <= truth <= got.high
        widths.append(got.high - got.low)
    return TauCoverage(launches, rounds_per_launch, runs, intervals, covered,
                       statistics.median(widths) if widths else None)


def seed000_shape(results: Path) -> tuple[dict[str, float], dict[str, float], float, float]:
    """Each column's truth (a stack's mean log ratio in the committed run) and window noise (the
    median across stacks of its log ratios' sd)."""
    truths, noises = [], []
    for column in COLUMNS:
        run = load_results(results / "seeds" / column)
        rows = [r for r in summarize(run, baseline=BASELINE).rows if r.spec.workload == "db"]
        ratios = round_ratios(run, rows, BASELINE)
        truths.append({s: statistics.fmean(math.log(o.value) for o in v) for s, v in ratios.items() if v})
        noises.append(statistics.median(statistics.stdev(math.log(o.value) for o in v)
                                        for v in ratios.values() if len(v) > 1))
    return truths[0], truths[1], noises[0], noises[1]


def run_grid(results: Path, *, runs: int = 400, resamples: int = 1000,
             shapes: Sequence[tuple[int, int]] = ((3, 1), (4, 1), (3, 3), (4, 3))) -> list[TauCoverage]:
    first, second, sd_first, sd_second = seed000_shape(results)
    return [simulate(first, second, sd_first, sd_second, launches, rounds_per_launch=rounds, runs=runs,
                     resamples=resamples, seed=launches * 10 + rounds) for launches, rounds in shapes]


def load(results: Path) -> list[dict[str, float | int | None]] | None:
    """The committed grid, each cell with its coverage; None before it is committed."""
    path = results / RELATIVE
    if not path.exists():
        return None
    cells: list[dict[str, float | int | None]] = json.loads(path.read_text())["cells"]
    return cells


def main(argv: list[str]) -> int:
    results = Path(argv[0]) if argv else Path("docs/results")
    cells = run_grid(results)
    text = json.dumps({"shape": "seed 000: the committed columns' rankings as truth, their median window sd",
                       "cells": [asdict(c) | {"coverage": c.coverage} for c in cells]}, indent=1)
    (results / RELATIVE).write_text(text + "\n")
    for c in cells:
        print(f"{c.launches} launches x {c.rounds_per_launch} rounds: {c.covered} of {c.intervals} "
              f"({(c.coverage or 0):.1%}), median width {c.median_width}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
