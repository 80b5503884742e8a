"""Coverage of the baseline-from-all-windows intervals (analyze/baseline_all.py), by simulation,
beside today's paired intervals on the same simulated windows, and the windows it saves.

A run is simulated on the coverage grid's noise (analyze/coverage.py's model: a launch effect
per stack and launch, a machine speed per round each stack answers with its own sensitivity, a
window's heavy-tailed noise, outlier windows, stacks of unlike noise), but as log throughput of
every stack, the baseline included, since the estimator reads the baseline's windows itself.
coverage.simulate_logs returns ratios only, so the model is written out again here. Under
launch blocks each cycle partitions the other stacks at random into blocks of at most `block`
(as measure/rounds.py draws them) and each block is a launch of its own with the baseline,
restarted per block, so its launch effect is drawn per block.

*Windows saved*: the paired estimator is simulated at more cycles (launches, or cycles of
blocks) until its median half-width is at most the new one's at the cell's cycles; the windows
those cycles cost beyond the cell's are what estimating the baseline once saves.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pywebbench.analyze.baseline_all import fit
from pywebbench.analyze.coverage import Noise, write_record
from pywebbench.analyze.moderation import moderated_intervals

_Array = np.ndarray[Any, Any]


@dataclass(frozen=True)
class Design:
    name: str
    stacks: int
    """Including the baseline."""
    cycles: int
    """Launches of each stack (one per cycle under blocks)."""
    rounds: int
    """Rounds per launch."""
    block: int | None = None
    """--launch-block: at most this many stacks and the baseline per launch (None: every stack)."""

    def blocks(self) -> int:
        return 1 if self.block is None else max(1, math.ceil((self.stacks - 1) / self.block))

    def windows(self, cycles: int) -> int:
        """Windows measured in this many cycles: every stack's, the baseline once per launch."""
        return cycles * self.rounds * (self.stacks - 1 + self.blocks())


def simulate(design: Design, noise: Noise, runs: int, rng: np.random.Generator) -> tuple[_Array, _Array]:
    """Log throughput (runs, stacks, launches, rounds), NaN outside a stack's blocks, and each
    stack's true log ratio to the baseline (runs, stacks - 1)."""
    s, r, count = design.stacks, design.rounds, design.blocks()
    l = design.cycles * count
    scale = np.exp(rng.normal(0.0, noise.stack_spread, (runs, s)))
    scale *= np.where(rng.random((runs, s)) < noise.noisy_share, 3.0, 1.0)
    scale[:, 0] *= noise.baseline_factor
    if s > 1:
        scale[:, 1] *= noise.marked_factor
    mu = rng.normal(0.0, 0.5, (runs, s))
    launch = rng.normal(0.0, 1.0, (runs, s, l)) * (noise.launch_sd * scale)[..., None]
    machine = rng.normal(0.0, noise.machine_sd, (runs, 1, l, r))
    sensitivity = 1.0 + rng.normal(0.0, noise.sensitivity_sd, (runs, s, 1, 1))
    tail = rng.standard_t(noise.tail_df, (runs, s, l, r)) / math.sqrt(noise.tail_df / (noise.tail_df - 2.0))
    window = tail * (noise.round_sd * scale)[..., None, None]
    outliers = np.where(rng.random((runs, s, l, r)) < noise.outlier_rate, math.log(noise.outlier_factor), 0.0)
    logs = mu[..., None, None] + launch[..., None] + sensitivity * machine + window + outliers
    if design.block is not None:
        held = np.zeros((runs, s, l), dtype=bool)
        held[:, 0, :] = True
        for run in range(runs):
            for cycle in range(design.cycles):
                others = rng.permutation(np.arange(1, s))
                for index in range(count):
                    held[run, others[index::count], cycle * count + index] = True
        logs = np.where(held[..., None], logs, np.nan)
    return logs, mu[:, 1:] - mu[:, :1]


@dataclass(frozen=True)
class Scored:
    intervals: int
    covered: int
    median_half_width: float | None


def _score(centre: _Array, half: _Array, truth: _Array) -> Scored:
    has = np.isfinite(half)
    covered = has & (np.abs(centre - truth) <= np.where(has, half, 0.0))
    halves = np.expm1(half[has])
    return Scored(int(has.sum()), int(covered.sum()), float(np.median(halves)) if halves.size else None)


def score_both(logs: _Array, truth: _Array, confidence: float = 0.95, *,
               marked: bool = False) -> tuple[Scored, Scored]:
    """(the new estimator, today's paired one) on the same simulated runs; `marked`: the first
    stack after the baseline's ratios only (a noise class of one stack)."""
    new = [fit(run, confidence) for run in logs]
    centre = np.stack([b.centre for b in new])
    half = np.stack([b.half for b in new])
    paired, _, _ = moderated_intervals(logs[:, 1:] - logs[:, :1], confidence)
    keep = slice(0, 1) if marked else slice(None)
    return (_score(centre[:, keep], half[:, keep], truth[:, keep]),
            _score(paired.centre[:, keep], paired.half[:, keep], truth[:, keep]))


MARKED_RUNS = 2000
"""Runs of a one-stack noise class (one ratio scored per run), simulated in batches of BATCH."""
BATCH = 250


def _marked_cell(design: Design, noise: Noise, rng: np.random.Generator) -> tuple[Scored, Scored]:
    scored = []
    for _ in range(MARKED_RUNS // BATCH):
        logs, truth = simulate(design, noise, BATCH, rng)
        scored.append(score_both(logs, truth, marked=True))
    return _sum([new for new, _ in scored]), _sum([old for _, old in scored])


def _sum(parts: list[Scored]) -> Scored:
    halves = [p.median_half_width for p in parts if p.median_half_width is not None]
    # The median of batch medians: close to the whole cell's at equal batches.
    return Scored(sum(p.intervals for p in parts), sum(p.covered for p in parts),
                  float(np.median(halves)) if halves else None)


def paired_half_width(design: Design, cycles: int, noise: Noise, runs: int, seed: int) -> float | None:
    rng = np.random.default_rng(seed)
    logs, truth = simulate(Design(design.name, design.stacks, cycles, design.rounds, design.block), noise, runs, rng)
    bounds, _, _ = moderated_intervals(logs[:, 1:] - logs[:, :1])
    return _score(bounds.centre, bounds.half, truth).median_half_width


MAX_CYCLES = 40


def cycles_for(design: Design, target: float, noise: Noise, runs: int, seed: int) -> int | None:
    """The fewest cycles at which the paired estimator's median half-width is at most target."""
    for cycles in range(design.cycles, MAX_CYCLES + 1):
        half = paired_half_width(design, cycles, noise, runs, seed + cycles)
        if half is not None and half <= target:
            return cycles
    return None


DESIGNS = (
    Design("default run", 14, 4, 2),
    Design("seed 003", 26, 3, 2),
    Design("seed 003 in blocks of 8", 26, 4, 1, 8),
    Design("catalog in blocks of 15", 126, 4, 1, 15),
    Design("catalog in blocks of 15", 126, 7, 1, 15),
)
"""The committed runs' shapes: the default run, seed003-even (5 rounds in 3 launches), and the
catalog-even run's launch blocks (7 cycles of one round; 4 as the duet had)."""
NOISES = {"1x": Noise(), "baseline 2x": Noise(baseline_factor=2.0), "one stack 2x": Noise(marked_factor=2.0)}
"""The coverage grid's noise, the same with the baseline twice as noisy as its scale, and with
one stack so (its own ratio scored: its noise also enters its launch companions' ratios)."""


def ratios_per_cell(design: Design) -> int:
    return 20000 if design.stacks < 100 else 50000


def record(seed: int = 0) -> dict[str, object]:
    """Every design at every noise: the JSON scripts/coverage commits as baseline-all.json (schema 1)."""
    cells: list[dict[str, object]] = []
    for index, design in enumerate(DESIGNS):
        for name, noise in NOISES.items():
            rng = np.random.default_rng(seed + 100 * index + len(cells))
            if noise.marked_factor != 1.0:
                runs = MARKED_RUNS
                new, today = _marked_cell(design, noise, rng)
            else:
                runs = max(100, ratios_per_cell(design) // (design.stacks - 1))
                new, today = score_both(*simulate(design, noise, runs, rng))
            needed = cycles_for(design, new.median_half_width, noise, runs, seed + 1000 * index) \
                if new.median_half_width is not None and name == "1x" else None
            cells.append({**asdict(design), "noise": name, "runs": runs,
                          "new": asdict(new), "paired": asdict(today),
                          "windows": design.windows(design.cycles),
                          "paired_cycles_for_same_width": needed,
                          "paired_windows_for_same_width": None if needed is None else design.windows(needed)})
    return {"schema": 1, "seed": seed, "confidence": 0.95,
            "noise": {name: asdict(noise) for name, noise in NOISES.items()}, "cells": cells}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.baseline_all_coverage OUT.json (a few minutes here; one BLAS
    thread each, as scripts/coverage runs it: a small fit is slower on many)."""
    return write_record(argv, "pywebbench.analyze.baseline_all_coverage", record)


if __name__ == "__main__":
    raise SystemExit(main())
