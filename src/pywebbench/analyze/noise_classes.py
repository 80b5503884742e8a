"""Coverage per noise class: one stack noisier than the rest of its table, or a noisier baseline.

The coverage grid (analyze/coverage.py) averages over a table's stacks, so a stack twice as
noisy as the others can be under-covered while the table's average holds. Here the first stack
after the baseline is 1.5x, 2x or 4x noisier than its scale says (or the baseline 2x), the other
stacks of the usual spread, and its own intervals are scored (every stack's for the baseline).
"""

from __future__ import annotations

from dataclasses import asdict

import numpy as np

from pywebbench.analyze.coverage import Noise, Shape, simulate_logs, write_record
from pywebbench.analyze.moderation import moderated_intervals

CLASSES = {"1x": Noise(noisy_share=0.0), "1.5x": Noise(noisy_share=0.0, marked_factor=1.5),
           "2x": Noise(noisy_share=0.0, marked_factor=2.0), "4x": Noise(noisy_share=0.0, marked_factor=4.0),
           "baseline 2x": Noise(noisy_share=0.0, baseline_factor=2.0)}
SHAPES = (Shape(2, 2, 14), Shape(3, 1, 4), Shape(3, 2, 26), Shape(4, 2, 14), Shape(7, 1, 126), Shape(12, 1, 26))
"""The default run's shapes (2-4 launches of 14 stacks), calibrate's (3 ratios), seed 003's, the catalog's."""


def class_coverage(shape: Shape, noise: Noise, *, runs: int, seed: int = 0,
                   confidence: float = 0.95) -> tuple[int, int]:
    """(intervals, covered) of the marked stack (every stack's where only the baseline is marked)."""
    rng = np.random.default_rng(seed)
    logs, truth = simulate_logs(shape, noise, runs, rng)
    bounds, _, _ = moderated_intervals(logs, confidence)
    has = np.isfinite(bounds.half)
    covered = has & (np.abs(bounds.centre - truth) <= np.where(has, bounds.half, 0.0))
    if noise.marked_factor != 1.0:
        has, covered = has[:, 0], covered[:, 0]
    return int(has.sum()), int(covered.sum())


def record(seed: int = 0) -> dict[str, object]:
    """Every class at every shape: the JSON scripts/coverage commits (schema 1)."""
    cells = []
    for index, shape in enumerate(SHAPES):
        for name, noise in CLASSES.items():
            runs = 4000 if noise.marked_factor != 1.0 else max(400, 20000 // (shape.stacks - 1))
            intervals, covered = class_coverage(shape, noise, runs=runs, seed=seed + index)
            cells.append({"class": name, **asdict(shape), "runs": runs, "intervals": intervals, "covered": covered})
    return {"schema": 1, "seed": seed, "confidence": 0.95,
            "noise": {name: asdict(noise) for name, noise in CLASSES.items()}, "cells": cells}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.noise_classes OUT.json (under a minute here)."""
    return write_record(argv, "pywebbench.analyze.noise_classes", record)


if __name__ == "__main__":
    raise SystemExit(main())
