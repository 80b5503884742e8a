"""The gate's verdicts: head/base intervals judged against a threshold, from paired windows."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from pywebbench.analyze.gate import (
    GateFigure, GateVerdict, head_over_base, judge, rounds_to_resolve,
)
from pywebbench.analyze.paired import Interval
from pywebbench.report.gate import gate_json, gate_markdown, render_gate
from pywebbench.results.model import TrialResult
from support.builders import trial


def _interval(low: float, high: float, rounds: int = 8) -> Interval:
    centre = math.sqrt(low * high)
    return Interval(centre, low, high, rounds, 4, math.log(high / centre) / 2.0, df=3.0)


@pytest.mark.parametrize(("low", "high", "higher_is_better", "verdict"), [
    (0.90, 0.95, True, GateVerdict.REGRESSION),     # req/s wholly more than 2% down
    (0.99, 1.01, True, GateVerdict.EQUIVALENT),
    (1.05, 1.10, True, GateVerdict.IMPROVEMENT),
    (0.95, 1.00, True, GateVerdict.UNRESOLVED),     # straddles the threshold
    (1.05, 1.10, False, GateVerdict.REGRESSION),    # p99 or CPU per request wholly more than 2% up
    (0.90, 0.95, False, GateVerdict.IMPROVEMENT),
])
def test_an_interval_is_judged_on_the_worse_side_of_its_figure(low: float, high: float, higher_is_better: bool,
                                                               verdict: GateVerdict) -> None:
    assert judge(_interval(low, high), 0.02, higher_is_better) is verdict


def test_an_unresolved_interval_says_how_many_rounds_would_resolve_it() -> None:
    wide = _interval(0.95, 1.00, rounds=8)  # centre 0.975: 0.5% from the threshold 0.98
    needed = rounds_to_resolve(wide, 0.02)
    assert needed is not None and needed > 8
    narrow_enough = replace(wide, low=0.975 * (1 - 0.004), high=0.975 * (1 + 0.004), n_rounds=needed)
    assert judge(narrow_enough, 0.02, True) is GateVerdict.REGRESSION
    at_threshold = _interval(0.98 * 0.97, 0.98 / 0.97)
    assert rounds_to_resolve(at_threshold, 0.02) is None


def _windows(alias: str, level: float, noise: list[float]) -> list[TrialResult]:
    out = []
    for i, e in enumerate(noise):
        t = trial("app:gunicorn-sync", 1000.0 * level * math.exp(e), round_no=i + 1, p50_ms=10.0 / level)
        out.append(replace(t, spec=replace(t.spec, alias=alias, launch=i // 2 + 1,
                                           trial_id=f"{t.spec.trial_id}#{alias}")))
    return out


def test_a_slowed_head_is_a_regression_and_an_unchanged_one_is_not() -> None:
    rng = np.random.default_rng(7)
    machine = list(rng.normal(0.0, 0.15, 8))  # each round's machine speed: shared by base and head
    base = _windows("base", 1.0, machine)
    slowed = _windows("head", 0.8, [m + e for m, e in zip(machine, rng.normal(0.0, 0.005, 8))])
    gate = head_over_base(base + slowed, 0.02)
    rps = next(r for r in gate.rows if r.figure is GateFigure.RPS)
    assert rps.verdict is GateVerdict.REGRESSION and rps.interval is not None
    assert rps.interval.low < 0.8 < rps.interval.high and rps.interval.n_launches == 4
    assert gate.failed and "FAIL" in render_gate(gate) and "| app:gunicorn-sync | req/s |" in gate_markdown(gate)
    assert '"failed": true' in gate_json(gate)

    same = _windows("head", 1.0, [m + e for m, e in zip(machine, rng.normal(0.0, 0.002, 8))])
    unchanged = head_over_base(base + same, 0.02)
    assert not unchanged.failed
    assert next(r for r in unchanged.rows if r.figure is GateFigure.RPS).verdict is GateVerdict.EQUIVALENT


def test_one_launch_has_no_interval_and_never_fails() -> None:
    base = [replace(t, spec=replace(t.spec, launch=1)) for t in _windows("base", 1.0, [0.0, 0.1])]
    head = [replace(t, spec=replace(t.spec, launch=1)) for t in _windows("head", 0.5, [0.0, 0.1])]
    gate = head_over_base(base + head, 0.02)
    assert not gate.failed
    assert all(r.verdict is GateVerdict.NO_INTERVAL and r.why_none == "needs 3 launches" for r in gate.rows
               if r.figure is GateFigure.RPS)
