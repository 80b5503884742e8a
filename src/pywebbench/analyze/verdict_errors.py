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
from enum import StrEnum
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


class Design(StrEnum):
    COMPLETE = "complete"
    """Every stack in every launch, the rounds fixed in advance."""
    ADAPTIVE = "adaptive"
    """--allocation adaptive's ranking rule: after two pilot launches, a stack placed against both
    neighbours leaves, looked at before every launch; the same windows as the complete design,
    spread over up to three times its launches."""


PILOT_LAUNCHES = 2
"""The adaptive rule's launches before its first look, as analyze/allocation's grid simulates it
(a run's pilot is its --repeats)."""


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
    design: str = Design.COMPLETE.value


def tied_truths(stacks: int, rng: np.random.Generator) -> _Array:
    """Log ratios to the baseline for stacks - 1 stacks, about half of them equal to another's."""
    levels = rng.normal(0.0, 0.5, stacks)
    return levels[rng.integers(0, max(1, stacks // 2), stacks - 1)]


def _ranked(logs: _Array, margin: float, control: FamilyControl) -> list[tuple[str, int, PairVerdict | None]]:
    """One run's table ranked and judged as summarize judges it ("base" the baseline, "s<i>" stack i)."""
    launches, rounds = logs.shape[-2:]
    keys = [(launch + 1, r + 1) for launch in range(launches) for r in range(rounds)]
    sets = {f"s{i}": [Observation(l, r, math.exp(float(logs[i, l - 1, r - 1]))) for l, r in keys
                      if math.isfinite(float(logs[i, l - 1, r - 1]))] for i in range(logs.shape[0])}
    intervals, prior = table_intervals(sets)
    items: list[tuple[str, list[Observation]]] = [("base", [Observation(l, r, 1.0) for l, r in keys])]
    items += list(sets.items())
    return rank_with_verdicts(items, prior=prior, margin=margin, intervals=intervals, control=control, baseline="base")


def _judged(logs: _Array, truth: _Array, margin: float, control: FamilyControl) -> tuple[int, int, int, int]:
    """One run: (different calls, wrong ones, equivalent calls, wrong ones)."""
    true = {"base": 0.0, **{f"s{i}": float(truth[i]) for i in range(len(truth))}}
    ranked = _ranked(logs, margin, control)
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


def retired_by_verdicts(logs: _Array, budget: int, margin: float, control: FamilyControl) -> _Array:
    """One run (stack, launch, round) as --allocation adaptive's ranking rule measures it: before
    each launch after the pilot, the table so far is ranked and judged as the report judges it
    (analyze/allocation.ranking_rule); a stack resolved against both neighbours (the table's ends
    count as resolved) leaves for good, and no launch starts past the windows of the budget."""
    out = np.array(logs, dtype=float)
    stacks, launches, rounds = out.shape
    done = np.zeros(stacks, dtype=bool)
    spent = stacks * PILOT_LAUNCHES * rounds
    resolved = {PairVerdict.DIFFERENT, PairVerdict.EQUIVALENT}
    for launch in range(PILOT_LAUNCHES, launches):
        ranked = _ranked(out[:, :launch, :], margin, control)
        verdicts = [PairVerdict.DIFFERENT, *(v for _l, _g, v in ranked[:-1]), PairVerdict.DIFFERENT]
        for index, (label, _group, _v) in enumerate(ranked):
            if label != "base" and verdicts[index] in resolved and verdicts[index + 1] in resolved:
                done[int(label[1:])] = True
        cost = int(np.sum(~done)) * rounds
        if done.all() or spent + cost > budget:
            out[:, launch:, :] = np.nan
            break
        spent += cost
        out[done, launch, :] = np.nan
    return out


def simulate(shape: Shape, name: str, *, runs: int, noise: Noise = Noise(), control: FamilyControl = CONTROL,
             margin: float = EQUIVALENCE, seed: int = 0, design: Design = Design.COMPLETE) -> Errors:
    rng = np.random.default_rng(seed)
    simulated = shape if design is Design.COMPLETE else Shape(shape.launches * 3, shape.rounds, shape.stacks)
    logs, truth = simulate_logs(simulated, noise, runs, rng)
    truths = np.stack([tied_truths(shape.stacks, rng) for _ in range(runs)])
    logs = logs - truth[..., None, None] + truths[..., None, None]  # the same runs about tied truths
    if design is Design.ADAPTIVE:  # the rule's looks before each launch, judged where it stopped
        budget = (shape.stacks - 1) * shape.launches * shape.rounds
        logs = np.stack([retired_by_verdicts(logs[k], budget, margin, control) for k in range(runs)])
    judged = np.array([_judged(logs[k], truths[k], margin, control) for k in range(runs)], dtype=float)
    calls, wrong, equal_calls, equal_wrong = judged.T
    return Errors(name, control.value, runs, float(calls.mean()),
                  float(np.mean(wrong / np.maximum(calls, 1))), float(np.mean(wrong > 0)),
                  float(equal_calls.mean()), float(np.mean(equal_wrong / np.maximum(equal_calls, 1))),
                  float(np.mean(equal_wrong > 0)), design.value)


def record(seed: int = 0) -> dict[str, object]:
    """Every committed shape under each control at each noise (stacks of unequal noise, one in
    ten three times noisier still), and adaptive allocation's looks under the default control:
    the JSON scripts/coverage commits (schema 2: a cell's `design`; schema 1 cells are complete)."""
    cells = []
    for index, (name, shape) in enumerate(SHAPES.items()):
        runs = max(100, 20000 // shape.stacks)
        for label, noise in NOISES.items():
            for control in FamilyControl:
                cells.append({"noise": label, **asdict(simulate(shape, name, runs=runs, noise=noise, control=control,
                                                                seed=seed + index))})
            cells.append({"noise": label, **asdict(simulate(shape, name, runs=runs, noise=noise, seed=seed + index,
                                                            design=Design.ADAPTIVE))})
    return {"schema": 2, "seed": seed, "level": LEVEL, "margin": EQUIVALENCE,
            "noises": {label: asdict(noise) for label, noise in NOISES.items()},
            "default_control": CONTROL.value, "cells": cells}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.verdict_errors OUT.json (a few minutes here)."""
    return write_record(argv, "pywebbench.analyze.verdict_errors", record)


if __name__ == "__main__":
    raise SystemExit(main())
