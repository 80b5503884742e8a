"""Change points of a series: where its level steps, by Apache Otava (the E-Divisive means
method with Hunter's sliding windows and t-test merge, Fleming et al. 2023).

Otava was chosen over MongoDB's signal-processing-algorithms by the comparison kept in
tests/unit/test_history_changepoints.py; its module docstring has the figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence


MAX_PVALUE = 1e-4
"""A step is kept when the t-test of the levels either side gives p below this. Otava's default
(1e-3) marked a spurious step in 3% of flat synthetic series of 50 points and 6% of 100; 1e-4
in 0.5% and none, while still finding a 3% step under 1% noise in 97% of series."""
WINDOW = 50
"""Points each sliding window looks at (Otava's default): a step is judged against its neighbours,
not against the whole history."""


def change_points(values: Sequence[float]) -> tuple[int, ...]:
    """The positions where a new level starts (the first value after each step), ascending.

    Deterministic: the same series always gives the same answer (a t-test, no permutations)."""
    if len(values) < 3 or any(not math.isfinite(v) for v in values) or len(set(values)) == 1:
        return ()  # nothing to split: too short, or a constant (the baseline's own ratio of 1)
    # imported here: otava pulls in scipy.stats, about a second that every other command would pay
    from otava.analysis import compute_change_points  # type: ignore[import-untyped]

    found, _weak = compute_change_points(list(values), window_len=WINDOW, max_pvalue=MAX_PVALUE)
    return tuple(sorted(int(point.index) for point in found))
