"""Coverage of `run --precision`'s stop: the run ends at the first look at which every interval
is within ±precision.

`run --precision P` (the even design: every stack in every round) asks after each round, once
its planned rounds and three launches are in (first_look), whether every ratio's 95% interval is within ±P, and stops when it
is. Stopping because the intervals came out narrow is a look at the data: a run whose launches
happened to agree stops early with intervals too narrow for it, and the report computes them as
if the rounds had been fixed in advance. How much coverage that costs is measured here, on the
coverage grid's noise (interleaved) and the duet grid's (duet), by applying the harness's rule
after every simulated round (`python -m pywebbench.analyze.stopping OUT.json`, in
scripts/coverage, rendered into docs/method.md). Stacks leaving one by one (--allocation
adaptive) are analyze/allocation.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pywebbench.analyze.allocation import settled
from pywebbench.analyze.coverage import Noise, Shape, simulate_logs, write_record
from pywebbench.analyze.duet import duet_half_widths
from pywebbench.analyze.duet_coverage import DuetNoise, simulate_run
from pywebbench.analyze.moderation import moderated_intervals

_Array = np.ndarray[Any, Any]
Intervals = Callable[[_Array], tuple[_Array, _Array]]
"""Logs (..., stack, launch, round) -> each ratio's interval as (centre, half-width) in logs."""


def interleaved_intervals(logs: _Array) -> tuple[_Array, _Array]:
    bounds, _, _ = moderated_intervals(logs)
    return bounds.centre, bounds.half


def duet_intervals(logs: _Array) -> tuple[_Array, _Array]:
    """The moderated intervals widened by the duet's run term, as the report widens them."""
    bounds, _, _ = moderated_intervals(logs)
    return bounds.centre, np.where(np.isfinite(bounds.half), duet_half_widths(bounds.se, bounds.df), np.nan)


def truncated(logs: _Array, measured: _Array) -> _Array:
    """The logs with NaN from each run's `measured`-th round on (rounds counted launch by launch)."""
    launches, rounds = logs.shape[-2:]
    index = np.arange(launches * rounds).reshape(launches, rounds)
    keep = index < np.asarray(measured)[..., None, None, None]
    return np.where(keep, logs, np.nan)


def rounds_at_stop(logs: _Array, intervals: Intervals, min_rounds: int, precision: float) -> _Array:
    """Rounds each run measures under the rule: the first count of rounds, from min_rounds on,
    after which every ratio is within ±precision; every round when none is."""
    runs_shape = logs.shape[:-3]
    total = logs.shape[-2] * logs.shape[-1]
    stop = np.full(runs_shape, total)
    for count in range(min_rounds, total):
        _, half = intervals(truncated(logs, np.full(runs_shape, count)))
        narrow = np.all(settled(half, precision), axis=-1)
        stop = np.where((stop == total) & narrow, count, stop)
    return stop


@dataclass(frozen=True)
class StopCell:
    method: str
    shape: Shape
    """The longest run: shape.launches launches of shape.rounds rounds (the --max-rounds)."""
    min_rounds: int
    precision: float
    runs: int
    intervals: int
    covered: int
    stopped_early: int
    """Runs the rule ended before their last round."""
    mean_rounds: float

    @property
    def coverage(self) -> float | None:
        return self.covered / self.intervals if self.intervals else None


def stop_cell(method: str, shape: Shape, logs: _Array, truth: _Array, min_rounds: int,
              precision: float) -> StopCell:
    intervals = duet_intervals if method == "duet" else interleaved_intervals
    stop = rounds_at_stop(logs, intervals, min_rounds, precision)
    centre, half = intervals(truncated(logs, stop))
    has = np.isfinite(half)
    covered = has & (np.abs(centre - truth) <= np.where(has, half, 0.0))
    total = shape.launches * shape.rounds
    return StopCell(method, shape, min_rounds, precision, int(stop.size), int(has.sum()), int(covered.sum()),
                    int(np.sum(stop < total)), float(np.mean(stop)))


def simulated(method: str, shape: Shape, runs: int, seed: int) -> tuple[_Array, _Array]:
    """Runs of known truth at the longest shape: (runs, stacks - 1, launches, rounds) and truths."""
    rng = np.random.default_rng(seed)
    if method == "interleaved":
        return simulate_logs(shape, Noise(), runs, rng)
    made = [simulate_run(shape, DuetNoise(), rng) for _ in range(runs)]
    return np.stack([m[0] for m in made]), np.stack([m[1] for m in made])


GRID: tuple[tuple[str, Shape, int, tuple[float, ...]], ...] = (
    # (method, longest run, runs simulated, precisions): precisions from ones most runs reach
    # early to ones few reach, so the rule's looks decide when the run ends.
    ("interleaved", Shape(12, 2, 5), 2000, (0.05, 0.10, 0.20)),
    ("interleaved", Shape(12, 2, 14), 800, (0.05, 0.10, 0.20)),
    ("interleaved", Shape(12, 2, 26), 400, (0.05, 0.10, 0.20)),
    ("duet", Shape(8, 2, 3), 1500, (0.01, 0.02, 0.03)),
    ("duet", Shape(8, 2, 5), 800, (0.01, 0.02, 0.03)),
)
FIRST_LOOK_LAUNCHES = 3
"""The rule looks first once three launches are in. Looking from the second launch on (where
pooled spreads already give intervals) let runs that happened to agree stop at once: coverage
down to 93.2% where most runs stopped early, against 94.0% and up from the third (both rows in
docs/method.md)."""
LOOKS_FROM = (2 * 2, FIRST_LOOK_LAUNCHES * 2)
"""The simulated runs' rounds before the first look: two launches of two (the rule before), and
three (the rule the harness runs)."""


def first_look(planned_rounds: int, rounds_per_launch: int, precision: float | None) -> int:
    """Rounds a paired run measures before --precision's rule may stop it: its planned rounds,
    and at least FIRST_LOOK_LAUNCHES launches when the rule is asked."""
    return max(planned_rounds, FIRST_LOOK_LAUNCHES * rounds_per_launch) if precision else planned_rounds


def grid_record(*, seed: int = 0) -> dict[str, object]:
    """Every cell's coverage under the stop, as committed (schema 1)."""
    cells = []
    for index, (method, shape, runs, precisions) in enumerate(GRID):
        logs, truth = simulated(method, shape, runs, seed + index)
        cells += [stop_cell(method, shape, logs, truth, looks_from, p) for p in precisions for looks_from in LOOKS_FROM]
    return {"schema": 1, "seed": seed, "confidence": 0.95, "first_look_launches": FIRST_LOOK_LAUNCHES,
            "cells": [{**asdict(c.shape), **{k: v for k, v in asdict(c).items() if k != "shape"},
                       "coverage": c.coverage} for c in cells]}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.stopping OUT.json"""
    return write_record(argv, "pywebbench.analyze.stopping", grid_record)


if __name__ == "__main__":
    raise SystemExit(main())
