"""Windows where the answer is still open (--precision with --allocation adaptive).

Under the precision rule a run adds rounds until every ratio's 95% interval is within
±precision. Measuring every stack in every round spends windows on stacks already that narrow.
Adaptive allocation decides at each launch, once the pilot rounds (--repeats) are in: the launch
starts and measures only the stacks still wider than asked, with the baseline every ratio is
paired to. A stack that leaves takes no more windows and its server is not started again (one
idle server fewer on the stack CPU). Its windows stay, and every interval is computed from all
of them, moderated across the whole table, as before.

Letting a stack go because its interval came out narrow is a look at the data: a stack whose
launches happened to agree leaves with an interval too narrow for it. How much coverage that
costs at each shape, and what it buys at the same windows as the even design, is measured here
by simulation on the coverage grid's noise (`python -m pywebbench.analyze.allocation OUT.json`,
rendered into docs/method.md).

Without --precision the rule is the ranking's (`ranking_rule`, simulated as `placed`): a stack
leaves once its own paired ratio to each neighbour in the ranking is different or equivalent
within the run's --equivalence, the verdicts the ranking table prints. It ends the run when every
stack is placed, or at the budget. The simulation once showed it answering fewer pairs than the
even design; that was the launch effect read as the plain mean of the few stacks a late launch
still held (their mean level). Read by the additive fit (moderation.launch_effects), it answers
more in every simulated shape.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from pywebbench import __version__
from pywebbench.analyze.coverage import Noise, Shape, simulate_logs, write_record
from pywebbench.analyze.moderation import launch_intervals, moderated_intervals
from pywebbench.analyze.neighbours import EQUIVALENCE, PairVerdict
from pywebbench.analyze.precision import wide_rows
from pywebbench.analyze.rows import Row, ranked_rows, summarize
from pywebbench.results.model import MachineInfo, ResultSet, RunHeader, TrialResult

_Array = np.ndarray[Any, Any]


# --- the rule the harness runs ---------------------------------------------------------------

_MACHINE = MachineInfo("", "", 0, (), 0, "", "", "", (0.0, 0.0, 0.0))


def live_rows(trials: Sequence[TrialResult], baseline: str) -> tuple[Row, ...]:
    """Report rows of trials still being measured (the stopping rule reads them each round)."""
    header = RunHeader("live", "", __version__, (), {}, _MACHINE, {})
    return summarize(ResultSet(header, tuple(trials)), baseline=baseline).rows


def open_rule(baseline: str, precision: float) -> Callable[[Sequence[TrialResult]], Sequence[str]]:
    """The stopping rule the rounds ask after each round: the labels whose paired ratio (or,
    for the baseline alone, req/s) is wider than ±precision; none when the run may stop."""
    def still_open(trials: Sequence[TrialResult]) -> Sequence[str]:
        return tuple(row.label for row in wide_rows(live_rows(trials, baseline), precision))
    return still_open


def ranking_rule(baseline: str) -> Callable[[Sequence[TrialResult]], Sequence[str]]:
    """The stopping rule of --allocation adaptive without --precision: the labels not yet placed
    against both neighbours in some workload's ranking; none when the run may stop."""
    def still_open(trials: Sequence[TrialResult]) -> Sequence[str]:
        return unplaced(live_rows(trials, baseline), baseline)
    return still_open


_RESOLVED = frozenset({PairVerdict.DIFFERENT.value, PairVerdict.EQUIVALENT.value})


def unplaced(rows: Sequence[Row], baseline: str) -> tuple[str, ...]:
    """Labels whose verdict against the row above or below them is unresolved (or missing), in
    any cell; the baseline is measured in every launch whatever its place."""
    by_cell: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        by_cell.setdefault(row.spec.cell, []).append(row)
    found: set[str] = set()
    for cell_rows in by_cell.values():
        found.update(r.label for r in cell_rows if r.ratio is None)  # not placed anywhere yet
        ranked = ranked_rows(cell_rows)
        for i, row in enumerate(ranked):
            above = ranked[i - 1].next_verdict if i > 0 else PairVerdict.DIFFERENT.value
            below = row.next_verdict if i < len(ranked) - 1 else PairVerdict.DIFFERENT.value
            if above not in _RESOLVED or below not in _RESOLVED:
                found.add(row.label)
    found.discard(baseline)
    return tuple(sorted(found))


def settled(half_logs: _Array, precision: float) -> _Array:
    """Ratios whose interval (log half-width) is within ±precision as the report measures it
    (stats.half_width: the wider side, exp(half) - 1 for a log-symmetric interval)."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(half_logs) & (np.expm1(np.where(np.isfinite(half_logs), half_logs, np.inf)) <= precision)


# --- the same rules on simulated runs (..., stack, launch, round) of ratios to the baseline ------


def placed(logs: _Array, margin: float = EQUIVALENCE, confidence: float = 0.95) -> _Array:
    """Ratios whose place in the ranking (the baseline among them, at 0) is resolved against
    both neighbours: their own paired ratio's interval excludes 1, or its (2 confidence - 1)
    interval lies within ±margin, each borrowing the table's doubled own-part spread."""
    bounds, s0, d0 = moderated_intervals(logs, confidence)
    with_base = np.concatenate([np.zeros_like(logs[..., :1, :, :]), logs], axis=-3)
    centre = np.concatenate([np.zeros_like(bounds.centre[..., :1]), np.nan_to_num(bounds.centre, nan=-np.inf)], axis=-1)
    order = np.argsort(-centre, axis=-1, kind="stable")
    ranked = np.take_along_axis(with_base, order[..., None, None], axis=-3)
    pairs = ranked[..., :-1, :, :] - ranked[..., 1:, :, :]
    prior_v, prior_d = (2.0 * s0)[..., None], d0[..., None]
    wide = launch_intervals(pairs, prior_v, prior_d, confidence)
    narrow = launch_intervals(pairs, prior_v, prior_d, 2.0 * confidence - 1.0)
    with np.errstate(invalid="ignore"):
        different = np.isfinite(wide.half) & (np.abs(wide.centre) > wide.half)
        equivalent = np.isfinite(narrow.half) & (np.abs(narrow.centre) + narrow.half < math.log1p(margin))
    done = different | equivalent
    edge = np.ones_like(done[..., :1])
    both = np.concatenate([edge, done], axis=-1) & np.concatenate([done, edge], axis=-1)
    back = np.empty_like(both)
    np.put_along_axis(back, order, both, axis=-1)
    out: _Array = back[..., 1:]
    return out


def retire(logs: _Array, pilot_launches: int, precision: float | None = None, confidence: float = 0.95,
           windows: int | None = None) -> _Array:
    """The windows an adaptive run measures: logs with NaN for the launches after the one at
    whose start a stack was settled (within ±precision; without one, placed in the ranking),
    and for every launch once `windows` (per run) are spent."""
    out = np.array(logs, dtype=float)
    runs_shape, rounds = out.shape[:-3], out.shape[-1]
    done = np.zeros(out.shape[:-2], dtype=bool)
    spent = np.full(runs_shape, out.shape[-3] * pilot_launches * rounds)
    for launch in range(pilot_launches, out.shape[-2]):
        seen = out[..., :launch, :]
        if precision is not None:
            bounds, _, _ = moderated_intervals(seen, confidence)
            done |= settled(bounds.half, precision)
        else:
            done |= placed(seen, confidence=confidence)
        cost = np.sum(~done, axis=-1) * rounds
        allowed = np.ones(runs_shape, dtype=bool) if windows is None else spent + cost <= windows
        spent = spent + np.where(allowed, cost, 0)
        skip = done | ~allowed[..., None]
        out[..., launch, :] = np.where(skip[..., None], np.nan, out[..., launch, :])
    return out


@dataclass(frozen=True)
class RetiringCell:
    shape: Shape
    """The even design's shape; the adaptive run spends the same windows, in up to 3x the launches."""
    precision: float | None
    """None: the ranking rule."""
    pilot_launches: int
    runs: int
    intervals: int
    covered: int
    launches_used: float
    """The adaptive run's mean launches (the even design's: shape.launches)."""
    answered: int
    """Ratios answered at the end: within ±precision, or placed against both neighbours."""
    even_answered: int
    """The same count for every stack in every round, the same windows spent."""


def _answered(logs: _Array, precision: float | None) -> int:
    if precision is not None:
        bounds, _, _ = moderated_intervals(logs)
        return int(settled(bounds.half, precision).sum())
    return int(placed(logs).sum())


def simulate_retiring(shape: Shape, precision: float | None, noise: Noise = Noise(), *, pilot_launches: int = 2,
                      runs: int | None = None, seed: int = 0, confidence: float = 0.95) -> RetiringCell:
    """Coverage of the final intervals when stacks leave early, against the truth; and what the
    windows of the even design (every stack in shape.launches launches) answer each way."""
    count = runs if runs is not None else max(200, math.ceil(4000 / (shape.stacks - 1)))
    rng = np.random.default_rng(seed)
    longer = Shape(shape.launches * 3, shape.rounds, shape.stacks)
    logs, truth = simulate_logs(longer, noise, count, rng)
    even = logs[..., :shape.launches, :]
    budget = (shape.stacks - 1) * shape.launches * shape.rounds
    measured = retire(logs, pilot_launches, precision, confidence, windows=budget)
    used = np.any(~np.isnan(measured), axis=(-3, -1)).sum(axis=-1)
    bounds, _, _ = moderated_intervals(measured, confidence)
    has = np.isfinite(bounds.half)
    covered = has & (np.abs(bounds.centre - truth) <= np.where(has, bounds.half, 0.0))
    return RetiringCell(shape, precision, pilot_launches, count, int(has.sum()), int(covered.sum()),
                        float(np.mean(used)), _answered(measured, precision), _answered(even, precision))


GRID = tuple((Shape(launches, 2, stacks), precision)
             for stacks in (5, 14, 26) for launches in (4, 8)
             for precision in (0.05, 0.10, None))


def grid_record(noise: Noise = Noise(), *, seed: int = 0) -> dict[str, object]:
    """The adaptive design's coverage and spend per shape, as committed (schema 1)."""
    cells = [simulate_retiring(shape, precision, noise, seed=seed + i, runs=max(300, 6000 // (shape.stacks - 1)))
             for i, (shape, precision) in enumerate(GRID)]
    return {"schema": 1, "seed": seed, "noise": asdict(noise), "confidence": 0.95, "margin": EQUIVALENCE,
            "cells": [{**asdict(c.shape), **{k: v for k, v in asdict(c).items() if k != "shape"}} for c in cells]}


def main(argv: list[str] | None = None) -> int:
    """python -m pywebbench.analyze.allocation OUT.json"""
    return write_record(argv, "pywebbench.analyze.allocation", grid_record)


if __name__ == "__main__":
    raise SystemExit(main())
