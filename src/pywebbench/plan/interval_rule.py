"""How many launches a 95% ratio interval needs: one rule for the plan line, the budget fit,
the tables' words ("needs 3 launches") and the estimator itself (analyze/moderation.py).

A launch mean is the unit of replication, so L launches give a stack's own spread L - 1
degrees of freedom. A table of at least SPREADS_TO_POOL ratios lends each stack the spread of
the others (Smyth's moderation), and then two launches give an interval whose coverage the
simulation shows (scripts/coverage, docs/method.md). Where nothing can be lent (a table of one
or two ratios: calibrate's A2/A and B/A, a one-server gate, a compare of two stacks) the
interval rests on the stack's own launches alone, and one degree of freedom (t = 12.7) is a
range no reader can use: such an interval needs OWN_DF degrees of freedom, three launches.
"""

from __future__ import annotations

SPREADS_TO_POOL = 3
"""Ratios a table needs before their spreads can be pooled (chosen by the coverage grid)."""
OWN_DF = 2
"""Degrees of freedom an interval on a stack's own launches needs (two launches give one)."""
POOLED_LAUNCHES = 2
"""Launches an interval needs where its table lends a spread: one launch cannot show that the
stack is not one of the table's outlying ones."""


def least_launches(lent: bool) -> int:
    """Launches for a 95% interval: a lent spread needs two, a stack's own launches three."""
    return POOLED_LAUNCHES if lent else OWN_DF + 1


def launches_needed(ratios: int) -> int:
    """Launches for a 95% interval in a table of this many ratios to the baseline."""
    return least_launches(ratios >= SPREADS_TO_POOL)


def why_none(launches: int, lent: bool) -> str:
    """The table's words for a ratio that got no interval. `lent`: its table lent it a spread.
    Two launches in a lending table get none only for an outlying stack, which keeps its own."""
    if launches == 0:
        return "no paired rounds"
    return f"needs {max(least_launches(lent), launches + 1)} launches"
