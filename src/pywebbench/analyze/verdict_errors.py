"""How often a ranking's verdicts are wrong: simulated runs of known truth judged by the report's code.

A simulated table (analyze/coverage.simulate_logs: launch effects, the machine's speed, heavy
tails, outlier windows, stacks of unequal noise) is given truths with ties: about half of the
stacks share their level with another, so adjacent pairs that are truly alike are common, as
in a catalog where most neighbours are 1-2% apart. Its rows are ranked and judged by
neighbours.rank_with_verdicts, as summarize does. A "different" call is wrong where the two
truths are equal or ordered the other way; an "equivalent" call is wrong where the truths lie
further apart than the margin. Per shape: the false discovery rate of each kind of call (the
mean over runs of wrong calls / calls), the chance of any wrong call (the family-wise rate),
and how many calls were made.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pywebbench.analyze.coverage import Noise, Shape, simulate_logs, write_record
from pywebbench.analyze.neighbours import EQUIVALENCE, PairVerdict, rank_with_verdicts
from pywebbench.analyze.paired import Observation, table_intervals
from pywebbench.analyze.verdict_family import CONTROL, LEVEL, FamilyControl

_Array = np.ndarray[Any, Any]

SHAPES = {
    "default run (14 stacks, 4 launches of 2 rounds)": Shape(4, 2, 14),
    "seed 003 (26 stacks, 3 launches of 2 rounds)": Shape(3, 2, 26),
    "catalog (126 stacks, 7 launches of 1 round)": Shape(7, 1, 126),
}
"""The committed runs' shapes (docs/results/rankings: default-even, seed003-even, catalog-even),
each as a complete design: every stack in every launch."""


NOISES = {"catalog-like": Noise(), "calibration-like": Noise(round_sd=0.02, launch_sd=0.01)}
"""The coverage grid's noise (a window's 8%), and the calibrations' quieter one, where calls are many."""


@dataclass(frozen=True)
class Errors:
    shape: str
    control: str
    runs: int
    different_calls: float
    """Mean 'different' calls per run."""
    different_fdr: float
    different_any: float
    equivalent_calls: float
    equivalent_fdr: float
    equivalent_any: float


def tied_truths(stacks: int, rng: np.random.Generator) -> _Array:
    """Log ratios to the baseline for stacks - 1 stacks, about half of them equal to another's."""
    levels = rng.normal(0.0, 0.5, stacks)
    return levels[rng.integers(0, max(1, stacks // 2), stacks - 1)]


def _judged(logs: _Array, truth: _Array, margin: float, control: FamilyControl) -> tuple[int, int, int, int]:
    """One run: (different calls, wrong ones, equivalent calls, wrong ones)."""
    launches, rounds = logs.shape[-2:]
    keys = [(launch + 1, r + 1) for launch in range(launches) for r in range(rounds)]
    sets = {f"s{i}": [Observation(l, r, math.exp(float(logs[i, l - 1, r - 1]))) for l, r in keys
                      if math.isfinite(float(logs[i, l - 1, r - 1]))] for i in range(logs.shape[0])}
    intervals, prior = table_intervals(sets)
    items: list[tuple[str, list[Observation]]] = [("base", [Observation(l, r, 1.0) for l, r in keys])]
    items += list(sets.items())
    true = {"base": 0.0, **{f"s{i}": float(truth[i]) for i in range(len(truth))}}
    ranked = rank_with_verdicts(items, prior=prior, margin=margin, intervals=intervals, control=control)
    calls = wrong = equal_calls = equal_wrong = 0
    for (label, _group, verdict), (below, _g, _v) in zip(ranked, ranked[1:]):
        gap = true[label] - true[below]  # ranked best first: a right 'different' has gap > 0
        if verdict is PairVerdict.DIFFERENT:
            calls += 1
            wrong += gap <= 1e-12
        elif verdict is PairVerdict.EQUIVALENT:
            equal_calls += 1
            equal_wrong += abs(gap) > math.log1p(margin)
    return calls, wrong, equal_calls, equal_wrong


def simulate(shape: Shape, name: str, *, runs: int, noise: Noise = Noise(), control: FamilyControl = CONTROL,
             margin: float = EQUIVALENCE, seed: int = 0) -> Errors:
    rng = np.random.default_rng(seed)
    logs, truth = simulate_logs(shape, noise, runs, rng)
    truths = np.stack([tied_truths(shape.stacks, rng) for _ in range(runs)])
    logs = logs - truth[..., None, None] + truths[..., None, None]  # the same runs about tied truths
    judged = np.array([_judged(logs[k], truths[k], margin, control) for k in range(runs)], dtype=float)
    calls, wrong, equal_calls, equal_wrong = judged.T
    return Errors(name, control.value, runs, float(calls.mean()),
                  float(np.mean(wrong / np.maximum(calls, 1))), float(np.mean(wrong > 0)),
                  float(equal_calls.mean()), float(np.mean(equal_wrong / np.maximum(equal_calls, 1))),
                  float(np.mean(equal_wrong > 0)))


def record(seed: int = 0) -> dict[str, object]:
    """Every committed shape under each control at each noise (stacks of unequal noise, one in
    ten three times noisier still): the JSON scripts/coverage commits (schema 1)."""
    cells = []
    for index, (name, shape) in enumerate(SHAPES.items()):
        runs = max(100, 20000 // shape.stacks)
        for label, noise in NOISES.items():
            for control in FamilyControl:
                cells.append({"noise": label, **asdict(simulate(shape, name, runs=runs, noise=noise, control=control,
                                                                seed=seed + index))})
    return {"schema": 1, "seed": seed, "level": LEVEL, "margin": EQUIVALENCE,
            "noises": {label: asdict(noise) for label, noise in NOISES.items()},
            "default_control": CONTROL.value, "cells": cells}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.verdict_errors OUT.json (a few minutes here)."""
    return write_record(argv, "pywebbench.analyze.verdict_errors", record)


if __name__ == "__main__":
    raise SystemExit(main())
