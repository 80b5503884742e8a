"""What one comparison set's rounds are given: where their sessions come from, when to stop
adding them, the wall time left; and what they did (measure/rounds.py runs them)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from pywebbench.plan.sessions import Session
from pywebbench.results.model import ServiceRecord, TrialResult


@dataclass(frozen=True)
class Budget:
    """Wall time left for measuring: a round starts only if it should end before the deadline."""

    deadline: float | None
    """time.monotonic() value; None: no budget."""

    def allows(self, seconds: float) -> bool:
        return self.deadline is None or time.monotonic() + seconds <= self.deadline

    def seconds_left(self) -> float | None:
        return None if self.deadline is None else max(0.0, self.deadline - time.monotonic())

    def share(self, parts: int) -> Budget:
        """An equal share of what is left, for one of `parts` sweep points still to run."""
        if self.deadline is None or parts <= 1:
            return self
        return Budget(time.monotonic() + max(0.0, self.deadline - time.monotonic()) / parts)


@dataclass(frozen=True)
class RoundPlan:
    """Where the rounds of one comparison set come from, and when to stop adding them."""

    sessions: Callable[[int], Sequence[Session]]
    """The set's sessions for round r (a fresh random order each round)."""
    first_round: int
    min_rounds: int
    """Rounds run whatever the stopping rule says (it needs at least two for an interval)."""
    max_rounds: int
    too_wide: Callable[[Sequence[TrialResult]], Sequence[str]] | None
    """Labels whose answer is still open (an interval wider than asked, or a place in the ranking
    not yet resolved); None: no stopping rule but the rounds and the budget."""
    budget: Budget
    baseline: str
    """The stack every ratio is to; a duet needs it in the set (its ratios come from all pairs)."""
    adaptive: bool = False
    """After the pilot (min_rounds) a launch starts only too_wide's stacks and the baseline."""
    block: int | None = None
    """Stacks a launch starts besides the baseline, cycling through blocks (None: every one)."""
    answered: str = "precision"
    """The stop reason once too_wide finds nothing open: precision, or placed (the ranking rule)."""
    ratios: bool = True
    """Whether the set's answer is ratio intervals (False: capacity searches, which need none,
    so the pace note about launches would be noise)."""
    noise: Callable[[Sequence[TrialResult], int, int], tuple[str, ServiceRecord] | None] | None = None
    """Read after the second round: (the set's windows, the launches it plans, rounds per launch)
    -> the host's noise as a line and a record (analyze/host_noise.noise_reading); None: not read."""


@dataclass(frozen=True)
class SetOutcome:
    rounds: int
    launches: int
    stopped: str
    """Why adding rounds ended: precision, placed (the ranking rule), budget, max-rounds or rounds; no-server (none started) or
    wrong-answers (none answered right) after the first launch."""
