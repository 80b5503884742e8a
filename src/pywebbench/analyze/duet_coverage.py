"""Duet runs of known truth, simulated: how often their intervals labelled 95% cover it.

A simulated duet run has S stacks (the first is the baseline) in L launches of R rounds. Each
round loads the pairs plan/duet_design.py chooses, from the levels read off the rounds before
it, as the harness does. A pair window gives each side

    log x = mu_s + a_sl + b_s + c_w + e_sw (+ log f with probability p: an outlier side)

with a_sl the stack's launch effect, b_s the run's own offset of the stack's ratio to the
baseline (sd DUET_RUN_SD, b = 0 for the baseline: which side a lane or a CPU favoured all run
long, the term the intervals add and one run cannot show), c_w the host's speed in that
window (shared by both sides, so it cancels in the ratio), e_sw the side's noise (Student's t,
heavy tails, sd side_sd x the stack's scale; scales lognormal, a few stacks three times
noisier). Each round's ratios to the baseline come from
analyze/duet.py's least squares, the intervals from analyze/moderation.py with the run term,
as the report computes them. Defaults follow the committed duet calibrations: round sd
1-3%, launch sd 0-2.6% (docs/method.md).
"""

from __future__ import annotations

import math
import random
import sys
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pywebbench.analyze.coverage import (
    EDGE_MAX_RATIOS, EDGE_SE, Cell, Shape, clustered_se, near_edge, write_record,
)
from pywebbench.analyze.duet import DUET_RUN_SD, duet_half_widths, round_levels
from pywebbench.analyze.moderation import moderated_intervals
from pywebbench.plan.duet_design import duet_pairs

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class DuetNoise:
    side_sd: float = 0.015
    launch_sd: float = 0.01
    run_sd: float = DUET_RUN_SD
    machine_sd: float = 0.10
    stack_spread: float = 0.4
    noisy_share: float = 0.1
    tail_df: float = 4.0
    outlier_rate: float = 0.02
    outlier_factor: float = 0.8


@dataclass
class _Truth:
    """One simulated run's fixed parts, and the provisional levels its rounds read."""

    mu: _Array
    offset: _Array
    scale: _Array
    sums: _Array
    counts: _Array


def _truth(stacks: int, noise: DuetNoise, rng: np.random.Generator) -> _Truth:
    scale = np.exp(rng.normal(0.0, noise.stack_spread, stacks)) * np.where(rng.random(stacks) < noise.noisy_share,
                                                                           3.0, 1.0)
    mu = rng.normal(0.0, 0.5, stacks)
    offset = rng.normal(0.0, noise.run_sd, stacks)
    offset[0] = 0.0  # DUET_RUN_SD is the sd of a ratio's offset: the baseline's own is in each stack's
    return _Truth(mu, offset, scale, np.zeros(stacks), np.zeros(stacks))


def _round(truth: _Truth, members: list[int], launch: _Array, noise: DuetNoise, rng: np.random.Generator,
           design_rng: random.Random) -> dict[str, float]:
    """One round over `members` (the baseline, 0, among them) with these launch effects (by
    stack): the harness's pairs, each side's value, and the least-squares log ratios to 0."""
    labels = [str(i) for i in members]
    levels = {str(i): truth.sums[i] / truth.counts[i] for i in members if truth.counts[i]}
    pairs = [(int(a), int(b)) for a, b in duet_pairs(labels, levels, design_rng)]
    sides = np.array(pairs)
    shared = rng.normal(0.0, noise.machine_sd, (len(pairs), 1))
    tail_scale = math.sqrt(noise.tail_df / (noise.tail_df - 2.0))
    own = rng.standard_t(noise.tail_df, sides.shape) / tail_scale * noise.side_sd * truth.scale[sides]
    outliers = np.where(rng.random(sides.shape) < noise.outlier_rate, math.log(noise.outlier_factor), 0.0)
    values = truth.mu[sides] + launch[sides] + truth.offset[sides] + shared + own + outliers
    np.add.at(truth.sums, sides.ravel(), values.ravel())
    np.add.at(truth.counts, sides.ravel(), 1.0)
    return round_levels([{str(a): math.exp(va), str(b): math.exp(vb)}
                         for (a, b), (va, vb) in zip(pairs, values.tolist(), strict=True)], "0")


def simulate_run(shape: Shape, noise: DuetNoise, rng: np.random.Generator) -> tuple[_Array, _Array]:
    """One run's round log ratios to the baseline (stacks - 1, launches, rounds) and their truths."""
    s = shape.stacks
    truth = _truth(s, noise, rng)
    launch = rng.normal(0.0, noise.launch_sd, (s, shape.launches)) * truth.scale[:, None]
    design_rng = random.Random(int(rng.integers(2**32)))
    logs = np.full((s - 1, shape.launches, shape.rounds), np.nan)
    for l in range(shape.launches):
        for r in range(shape.rounds):
            fitted = _round(truth, list(range(s)), launch[:, l], noise, rng, design_rng)
            for i in range(1, s):
                if str(i) in fitted:
                    logs[i - 1, l, r] = fitted[str(i)]
    return logs, truth.mu[1:] - truth.mu[0]


def simulate_block_run(shape: Shape, block: int, noise: DuetNoise,
                       rng: np.random.Generator) -> tuple[_Array, _Array]:
    """The same under --launch-block: each cycle (`shape.launches` of them, one launch of each
    stack) partitions the other stacks at random into blocks of at most `block`, and each block
    is a launch of its own with the baseline, whose launch effect is drawn afresh for every
    block (as measure/rounds.py runs it). The logs are laid out by launch as the report reads a
    run's trials: (stack, launch, round), each stack present in its own block's launch only."""
    s = shape.stacks
    truth = _truth(s, noise, rng)
    launch = rng.normal(0.0, noise.launch_sd, (s, shape.launches)) * truth.scale[:, None]
    design_rng = random.Random(int(rng.integers(2**32)))
    others = list(range(1, s))
    count = max(1, math.ceil(len(others) / block))
    logs = np.full((s - 1, shape.launches * count, shape.rounds), np.nan)
    for l in range(shape.launches):
        design_rng.shuffle(others)
        for index, members in enumerate(others[i::count] for i in range(count)):
            effects = launch[:, l].copy()
            effects[0] = rng.normal(0.0, noise.launch_sd) * truth.scale[0]
            for r in range(shape.rounds):
                fitted = _round(truth, [0, *members], effects, noise, rng, design_rng)
                for i in members:
                    if str(i) in fitted:
                        logs[i - 1, l * count + index, r] = fitted[str(i)]
    return logs, truth.mu[1:] - truth.mu[0]


TARGET_SE = 0.004
"""A cell adds runs until its coverage's own standard error is this small (or MAX_RATIOS is
reached): at 0.4% a cell whose true coverage is 95% reads outside 93-97% about once in 500."""
MAX_RATIOS = 60_000
"""The most simulated ratios a cell spends reaching TARGET_SE (runs x (stacks - 1))."""


def _settled(share: float, se: float | None) -> bool:
    if se is None or se > TARGET_SE:
        return False
    return se <= EDGE_SE or not near_edge(share, se)


def simulate_cell(shape: Shape, noise: DuetNoise = DuetNoise(), *, runs: int | None = None, seed: int = 0,
                  confidence: float = 0.95, block: int | None = None) -> Cell:
    """How often the duet intervals of simulated runs of this shape (in launch blocks of at most
    `block` stacks and the baseline, if given) cover their truth. Without `runs`, batches of runs
    are added until the coverage's clustered standard error reaches TARGET_SE (or MAX_RATIOS), and
    past it while the reading is near an edge of BAND (`_settled`)."""
    batch = runs if runs is not None else max(200, math.ceil(4000 / (shape.stacks - 1)))
    most = batch if runs is not None else max(batch, MAX_RATIOS // (shape.stacks - 1))
    most_near_edge = batch if runs is not None else max(batch, EDGE_MAX_RATIOS // (shape.stacks - 1))
    rng = np.random.default_rng(seed)
    per_run: list[tuple[int, int]] = []
    halves: list[float] = []
    without = 0
    se: float | None = None
    share = 0.0
    while not _settled(share, se):
        limit = most_near_edge if se is not None and se <= TARGET_SE else most
        if len(per_run) >= limit:
            break
        made = [simulate_run(shape, noise, rng) if block is None else simulate_block_run(shape, block, noise, rng)
                for _ in range(min(batch, limit - len(per_run)))]
        counts, hits, widths, lacking = _cover(made, confidence)
        per_run.extend(zip(counts, hits, strict=True))
        halves.extend(widths)
        without += lacking
        covered_runs, counted_runs = np.array([h for _, h in per_run], float), np.array([c for c, _ in per_run], float)
        se = clustered_se(covered_runs, counted_runs)
        share = float(covered_runs.sum() / counted_runs.sum()) if counted_runs.sum() else 0.0
    intervals, covered = sum(c for c, _ in per_run), sum(h for _, h in per_run)
    return Cell(shape, len(per_run), intervals, covered, without,
                float(np.median(halves)) if halves else None, se)


def _cover(made: list[tuple[_Array, _Array]], confidence: float) -> tuple[list[int], list[int], list[float], int]:
    """Per run, its intervals and how many covered the truth; every interval's relative
    half-width; and the ratios that got none. Each interval is widened by the duet's run term,
    as the report widens every duet interval."""
    logs, truth = np.stack([m[0] for m in made]), np.stack([m[1] for m in made])
    bounds, _, _ = moderated_intervals(logs, confidence)
    has = np.isfinite(bounds.half)
    wide = np.where(has, duet_half_widths(bounds.se, bounds.df, confidence), np.inf)
    hits = has & (np.abs(bounds.centre - truth) <= wide)
    return (has.sum(axis=-1).tolist(), hits.sum(axis=-1).tolist(), np.expm1(wide[has]).tolist(),
            int((~has).sum()))


GRID_LAUNCHES = (2, 3, 4, 6)
GRID_ROUNDS = (1, 2, 3)
GRID_STACKS = (3, 5, 6, 14, 26, 127)


def grid_record(noise: DuetNoise = DuetNoise(), *, seed: int = 0) -> dict[str, object]:
    """The duet grid as the JSON scripts/coverage commits (schema 1) and docs/method.md renders."""
    shapes = [Shape(l, r, s) for l in GRID_LAUNCHES for r in GRID_ROUNDS for s in GRID_STACKS]
    cells = [simulate_cell(shape, noise, seed=seed + i) for i, shape in enumerate(shapes)]
    return {
        "schema": 1, "seed": seed, "noise": asdict(noise), "confidence": 0.95, "design": "plan/duet_design.py",
        "cells": [{"launches": c.shape.launches, "rounds": c.shape.rounds, "stacks": c.shape.stacks,
                   "runs": c.runs, "intervals": c.intervals, "covered": c.covered, "without": c.without,
                   "median_half_width": c.median_half_width, "se": c.se} for c in cells],
    }


BLOCK_SHAPES = ((127, 15), (26, 8))
"""(stacks, block): the whole catalog as the committed ranking ran it, and seed 003's size."""
BLOCK_LAUNCHES = (2, 3, 4)


BLOCK_NOISES = {"calibrations": DuetNoise(), "catalog": DuetNoise(side_sd=0.04)}
"""The duet calibrations' noise, and the committed catalog run's: its windows' log ratios left
about 5.7% RMS around each launch's least-squares fit (4% a side), where the calibrations' A/A
pairs left about 2% (docs/results/rankings/catalog, read in docs/catalog.md)."""


def blocks_record(noise: DuetNoise | None = None, *, seed: int = 0) -> dict[str, object]:
    """Duet runs in launch blocks, one round per launch (how a catalog ranking runs), at each of
    BLOCK_NOISES (or only `noise`): the JSON scripts/coverage commits as duet-blocks.json (schema 2)."""
    noises = BLOCK_NOISES if noise is None else {"given": noise}
    shapes = [(name, Shape(l, 1, s), b) for name in noises for s, b in BLOCK_SHAPES for l in BLOCK_LAUNCHES]
    cells = [(name, simulate_cell(shape, noises[name], seed=seed + i, block=b), b)
             for i, (name, shape, b) in enumerate(shapes)]
    return {
        "schema": 2, "seed": seed, "noises": {name: asdict(n) for name, n in noises.items()}, "confidence": 0.95,
        "design": "plan/duet_design.py",
        "cells": [{"noise": name, "launches": c.shape.launches, "rounds": c.shape.rounds, "stacks": c.shape.stacks,
                   "block": b, "runs": c.runs, "intervals": c.intervals, "covered": c.covered, "without": c.without,
                   "median_half_width": c.median_half_width, "se": c.se} for name, c, b in cells],
    }


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.duet_coverage OUT.json [--blocks]: the duet grid (a few
    minutes here), or with --blocks the launch-block cells."""
    args = sys.argv[1:] if argv is None else argv
    if "--blocks" in args:
        return write_record([a for a in args if a != "--blocks"], "pywebbench.analyze.duet_coverage --blocks",
                            blocks_record)
    return write_record(args, "pywebbench.analyze.duet_coverage", grid_record)


if __name__ == "__main__":
    raise SystemExit(main())
