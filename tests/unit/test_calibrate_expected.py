"""calibrate's expected B/A: from the sizing windows' CPU, with its own interval, checked against B/A."""

from __future__ import annotations

import math
import sys

import pytest

from pywebbench.analyze.calibrate import EXACTLY_ONE, Sizing, expected_ab, holds, normal_score
from pywebbench.analyze.paired import Interval
from pywebbench.catalog.servers import APPS_DIR


def _interval(center: float, se: float, df: float = 6.0) -> Interval:
    half = 2.447 * se
    return Interval(center, center * math.exp(-half), center * math.exp(half), 12, 7, se, df=df)


def test_the_expected_ratio_follows_the_probe_and_scales_with_the_loops() -> None:
    probe = _interval(1.30, 0.01)
    same = expected_ab(Sizing(loops=100, cpu_a_us=300.0, per_loop_us=0.9, probe_loops=100, probe_ratio=probe))
    assert same is not None and same.center == pytest.approx(1 / 1.30)
    assert same.low == pytest.approx(1 / (1 + (probe.high - 1))) and same.high == pytest.approx(1 / probe.low)
    sixth = expected_ab(Sizing(loops=50, cpu_a_us=300.0, per_loop_us=0.9, probe_loops=300, probe_ratio=probe))
    assert sixth is not None and sixth.center == pytest.approx(1 / (1 + 0.30 / 6))
    assert sixth.se_log < same.se_log  # a sixth of the probe: a sixth of its uncertainty, about
    assert expected_ab(Sizing(1, 300.0, 0.9, 100, None)) is None


def test_b_over_a_holds_the_expected_ratio_within_both_errors() -> None:
    expected = _interval(0.95, 0.004)
    assert holds(_interval(0.955, 0.006), expected) is True
    assert holds(_interval(0.92, 0.006), expected) is False
    assert holds(None, expected) is None


def test_a_narrow_expected_ratio_on_few_df_does_not_set_the_quantile() -> None:
    """Run 11 (interleaved): B/A 1.027 (se 0.021 on 9 df) against 0.950 (se 0.0035 on 2 df).
    On the smaller side's 2 df, t = 4.30 let a 3.7-se gap hold; Satterthwaite gives about 9.5 df."""
    expected = _interval(0.950, 0.0035, df=2.0)
    assert holds(_interval(1.027, 0.0206, df=9.0), expected) is False
    assert holds(_interval(0.990, 0.0206, df=9.0), expected) is True  # 1.9 se: within t(9.5) = 2.25


def test_the_normal_score_misses_exactly_where_holds_does() -> None:
    """A t score on 6 df at its 97.5% quantile (2.447) is a normal score of 1.96: the score and
    holds() are one rule, the score kept so that runs can be judged together."""
    expected = _interval(0.95, 0.004)
    for center in (0.90, 0.93, 0.94, 0.95, 0.955, 0.97, 1.0):
        observed = _interval(center, 0.006)
        score = normal_score(observed, expected)
        assert score is not None and (abs(score) <= 1.96) == holds(observed, expected)
    edge = normal_score(_interval(math.exp(2.447 * 0.01), 0.01, df=6.0), EXACTLY_ONE)
    assert edge == pytest.approx(1.96, abs=0.01)
    assert normal_score(_interval(0.99, 0.01), EXACTLY_ONE) < 0  # type: ignore[operator]
    assert normal_score(None, EXACTLY_ONE) is None


def test_b_spinning_the_probe_on_a_share_of_requests_expects_that_share_of_its_cost() -> None:
    """B spins the probe's own loops on a share of its requests: k = share, no loop-count scaling."""
    probe = _interval(1.62, 0.01)
    share = (1 / 0.95 - 1) / 0.62
    expected = expected_ab(Sizing(14_000, 160.0, 0.0071, 14_000, probe, share=share))
    assert expected is not None and expected.center == pytest.approx(0.95)
    same = expected_ab(Sizing(round(14_000 * share), 160.0, 0.0071, 14_000, probe))
    assert same is not None and same.center == pytest.approx(expected.center, abs=1e-4)


def test_the_app_spins_an_even_share_of_its_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(APPS_DIR))
    import pwb_common

    try:
        for share in (0.0848, 1 / 3, 0.5, 0.97):
            due = [pwb_common.spins_now(n, share) for n in range(10_000)]
            assert sum(due) == math.floor(10_000 * share)
            for start in range(0, 9_900, 997):  # any 100 requests in a row: within one of 100 x share
                assert abs(sum(due[start:start + 100]) - 100 * share) <= 1
        assert all(pwb_common.spins_now(n, 1.0) for n in range(50))
    finally:
        sys.modules.pop("pwb_common", None)
