import math
import random

from pywebbench.analyze.duet import PairSide
from pywebbench.analyze.duet_checks import cross_run, transitivity
from pywebbench.analyze.paired import Interval

LEVELS = {"a": 0.0, "b": 0.3, "c": -0.2, "d": 0.5}


def _sides(rounds: int, noise: float, twist: float = 0.0, seed: int = 1) -> list[PairSide]:
    """Every pair of LEVELS once a round; `twist` adds a fixed offset to the c-d pair alone (its
    ratio depends on the partner, so the pairs do not compose)."""
    rng = random.Random(seed)
    sides = []
    names = sorted(LEVELS)
    for r in range(rounds):
        for i, x in enumerate(names):
            for y in names[i + 1:]:
                log_ratio = LEVELS[x] - LEVELS[y] + rng.gauss(0, noise) + (twist if {x, y} == {"c", "d"} else 0)
                sides += [PairSide(r, r, x, y, 1000 * math.exp(log_ratio)), PairSide(r, r, y, x, 1000.0)]
    return sides


def test_pairs_that_compose_give_an_f_near_one() -> None:
    found = transitivity(_sides(rounds=40, noise=0.02))
    assert found is not None
    assert found.residual_df == 40 * (6 - 3) and found.replicate_df == 6 * 39
    assert 0.6 < found.f < 1.6 and found.p > 0.01
    # the replicate spread is the window noise itself, no fit involved
    assert abs(found.replicate_sd - 0.02) < 0.003


def test_a_pair_that_depends_on_its_partner_is_caught_and_named() -> None:
    found = transitivity(_sides(rounds=10, noise=0.01, twist=0.1))
    assert found is not None and found.f > 10 and found.p < 0.001
    assert {label for label, _ in found.leads[:2]} == {"c", "d"}


def test_no_replicate_or_no_residual_is_none() -> None:
    assert transitivity(_sides(rounds=1, noise=0.02)) is None  # each pair once: nothing to repeat
    assert transitivity([]) is None


def _interval(ratio: float, se: float) -> Interval:
    return Interval(center=ratio, low=ratio * math.exp(-2 * se), high=ratio * math.exp(2 * se), n_rounds=6,
                    n_launches=3, se_log=se, df=10.0, prior_df=10.0, confidence=0.95)


def test_across_runs_the_baseline_s_shift_is_set_apart_from_the_stacks() -> None:
    rng = random.Random(3)
    truth = {f"s{i}": math.exp(rng.uniform(-1, 1)) for i in range(30)}
    a = {s: _interval(r * math.exp(rng.gauss(0, 0.01)), 0.01) for s, r in truth.items()}
    b = {s: _interval(r * 1.05 * math.exp(rng.gauss(0, 0.01)), 0.01) for s, r in truth.items()}
    found = cross_run(a, b)
    assert found is not None and found.stacks == 30
    assert abs(math.log1p(found.shift) + math.log(1.05)) < 0.01  # a over b: the baseline sat 5% apart
    assert found.rms_z > 2.5 and 0.5 < found.rms_z_centred < 1.5
    assert abs(found.run_sd - math.log(1.05) / math.sqrt(2)) < 0.005
    assert cross_run(dict(list(a.items())[:2]), b) is None
