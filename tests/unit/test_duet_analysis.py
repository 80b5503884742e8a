"""Ratios to the baseline from a duet round's pairs: least squares on known inputs."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np

import pytest

from pywebbench.analyze.duet import PairSide, round_ratios
from pywebbench.analyze.paired import ratio_interval


def _window(round_no: int, a: str, va: float, b: str, vb: float, launch: int = 1) -> list[PairSide]:
    return [PairSide(launch, round_no, a, b, va), PairSide(launch, round_no, b, a, vb)]


def test_a_star_round_gives_the_direct_ratio() -> None:
    sides = _window(1, "B", 900.0, "A", 1000.0) + _window(1, "C", 1100.0, "A", 1000.0)
    (ratio,) = round_ratios(sides, "B", "A")
    assert ratio.value == pytest.approx(0.9)


def test_a_complete_round_recovers_consistent_levels_exactly() -> None:
    level = {"A": 1000.0, "A2": 1000.0, "B": 950.0}
    sides = [s for a, b in (("A", "A2"), ("A", "B"), ("A2", "B")) for s in _window(1, a, level[a], b, level[b])]
    assert round_ratios(sides, "B", "A")[0].value == pytest.approx(0.95)
    assert round_ratios(sides, "A2", "A")[0].value == pytest.approx(1.0)


def test_the_fit_averages_the_direct_and_the_indirect_path() -> None:
    # direct B/A says 0.90; through A2 it says 1.0 * 1.0: least squares gives the geometric blend
    sides = (_window(1, "A", 1.0, "A2", 1.0) + _window(1, "A", 1.0, "B", 0.9) + _window(1, "A2", 1.0, "B", 1.0))
    expected = math.exp(2 * math.log(0.9) / 3)  # the normal equations give theta_B = 2/3 of the direct log ratio
    assert round_ratios(sides, "B", "A")[0].value == pytest.approx(expected)


def test_a_lost_window_leaves_the_round_if_the_stack_still_reaches_the_baseline() -> None:
    sides = _window(1, "A", 1000.0, "A2", 1000.0) + _window(1, "A2", 900.0, "B", 1000.0)
    sides += [PairSide(1, 1, "A", "B", 1000.0)]  # B's side of this window failed: the pair is not used
    assert round_ratios(sides, "B", "A")[0].value == pytest.approx(1.0 / 0.9)
    alone = _window(2, "A2", 1.0, "B", 1.0)  # round 2: B never met A, even indirectly
    assert [o.round for o in round_ratios(sides + alone, "B", "A")] == [1]


def test_complete_rounds_are_as_precise_per_window_as_star_rounds() -> None:
    """Per window spent, the fit over every pair matches the star's precision (2/k vs 1 per round)."""
    rng = random.Random(7)
    truth = {"A": 1.0, "A2": 1.0, "B": 0.98}

    def noisy(name: str) -> float:
        return truth[name] * math.exp(rng.gauss(0.0, 0.02))

    def star(rounds: int) -> list[PairSide]:
        return [s for r in range(rounds) for other in ("A2", "B") for s in _window(r, "A", noisy("A"), other,
                                                                                   noisy(other), launch=r)]

    def complete(rounds: int) -> list[PairSide]:
        return [s for r in range(rounds) for a, b in (("A", "A2"), ("A", "B"), ("A2", "B"))
                for s in _window(r, a, noisy(a), b, noisy(b), launch=r)]

    widths = {"star": [], "complete": []}  # type: dict[str, list[float]]
    for _ in range(20):
        for name, sides in (("star", star(60)), ("complete", complete(40))):  # 120 windows each
            interval = ratio_interval(round_ratios(sides, "B", "A"))
            assert interval is not None
            widths[name].append(interval.half_width)
    ratio = sum(widths["complete"]) / sum(widths["star"])
    assert 0.85 < ratio < 1.15


def _committed_aa(method: str) -> list[tuple[float, float, bool]]:
    """(log A2/A, its se without the run term, whether the interval holds 1) per committed run."""
    from pywebbench.analyze.duet import DUET_RUN_SD
    from pywebbench.analyze.rows import summarize
    from pywebbench.results.store import load_results
    root = Path(__file__).resolve().parents[2] / "docs" / "results" / "calibrate" / method
    out = []
    for run in sorted((p for p in root.iterdir() if (p / "results.jsonl").exists()), key=lambda p: int(p.name)):
        row = next(r for r in summarize(load_results(run)).rows if r.spec.alias == "A2")
        interval = row.ratio_interval
        assert interval is not None
        own = interval.se_log ** 2 - (DUET_RUN_SD ** 2 if method == "duet" else 0.0)
        out.append((math.log(interval.center), math.sqrt(max(own, 0.0)), interval.low <= 1.0 <= interval.high))
    return out


def test_the_duet_run_term_is_what_the_committed_calibrations_show() -> None:
    from pywebbench.analyze.duet import DUET_RUN_DF, DUET_RUN_SD
    runs = _committed_aa("duet")
    fitted = runs[:DUET_RUN_DF + 1]  # duet/1-12 fixed the term; the later runs check it
    logs = np.asarray([log for log, _, _ in fitted])
    within = float(np.mean([se ** 2 for _, se, _ in fitted]))
    excess = math.sqrt(max(0.0, float(np.var(logs, ddof=1)) - within))
    assert excess == pytest.approx(DUET_RUN_SD, abs=0.0005)
    assert sum(holds for _, _, holds in runs) >= len(runs) - 1  # A/A holds 1 in all but at most one run


def test_window_noise_is_the_rms_around_each_rounds_fit_on_its_residual_degrees_of_freedom() -> None:
    from pywebbench.analyze.duet import window_noise
    # Three stacks, every pair once: 3 windows, 2 levels fitted, 1 residual df per round. Levels
    # 1 : 2 : 4 with the a-c window off by a factor e^0.03: the fit spreads it over the cycle.
    def sides(launch: int, off: float) -> list[PairSide]:
        values = {("a", "b"): (1.0, 2.0), ("b", "c"): (2.0, 4.0), ("a", "c"): (1.0 * math.exp(off), 4.0)}
        out = []
        for (x, y), (vx, vy) in values.items():
            out += [PairSide(launch, 1, x, y, vx), PairSide(launch, 1, y, x, vy)]
        return out
    found = window_noise(sides(1, 0.03) + sides(2, -0.03))
    assert found is not None
    rms, df = found
    assert df == 2
    # A cycle's residuals are each one third of the loop's misfit: three of 0.01 per round.
    assert math.isclose(rms, math.sqrt(6 * 0.01 ** 2 / 2), rel_tol=1e-9)
    assert window_noise(sides(1, 0.0)[:2]) is None  # one window, one level: no residual
