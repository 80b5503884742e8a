"""How faithfully a replayed window kept its log's arrival pattern, and what the server kept up with.

Each replayed window records, per second, what the recording scheduled, what the generator
offered, what came back and how many requests waited for a busy connection
(LoadResult.per_second). Offered against scheduled is the generator's fidelity to the log (the
target: every second within 5%); a request held back because all `--connections` were busy
counts as offered at its time, since the server held it (its latency counts the wait), and the
held-back share says how far the server fell behind; answered against offered is the server's.
Seconds the log scheduled fewer than MIN_SECOND requests in are left out of the worst-second
figure: at 10 requests one late request is already 10%.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import dataclass

from pywebbench.results.model import TrialResult

MIN_SECOND = 50


@dataclass(frozen=True)
class ReplayFidelity:
    label: str
    """The stack (and alias) the window loaded."""
    trial_id: str
    seconds: int
    judged_seconds: int
    """Seconds with at least MIN_SECOND scheduled requests."""
    scheduled: int
    sent: int
    """Offered: sent, or due while every connection was busy."""
    answered: int
    waited: int
    """Requests that waited for a busy connection (the server fell behind the log)."""
    worst_second: float
    """The largest |sent - scheduled| / scheduled over the judged seconds (0.03 = 3%)."""
    median_second: float
    peak_to_mean: float
    """The busiest scheduled second over the mean one: the burst the log carried into the window."""

    @property
    def kept_up(self) -> float:
        return self.answered / self.sent if self.sent else 0.0


def fidelity(trial: TrialResult) -> ReplayFidelity | None:
    """The window's fidelity, or None when it was not a replay (or sent nothing)."""
    load = trial.load
    if load is None or not load.per_second:
        return None
    rows = load.per_second
    judged = [abs(sent - scheduled) / scheduled for scheduled, sent, _, _ in rows if scheduled >= MIN_SECOND]
    counts = [scheduled for scheduled, _, _, _ in rows]
    mean = statistics.fmean(counts) if counts else 0.0
    return ReplayFidelity(
        label=trial.spec.label, trial_id=trial.spec.trial_id, seconds=len(rows), judged_seconds=len(judged),
        scheduled=sum(counts), sent=sum(row[1] for row in rows), answered=sum(row[2] for row in rows),
        waited=sum(row[3] for row in rows),
        worst_second=max(judged, default=0.0), median_second=statistics.median(judged) if judged else 0.0,
        peak_to_mean=max(counts) / mean if mean > 0 else 0.0,
    )


def fidelities(trials: Iterable[TrialResult]) -> list[ReplayFidelity]:
    return [f for f in (fidelity(t) for t in trials) if f is not None]
