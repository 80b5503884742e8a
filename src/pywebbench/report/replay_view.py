"""A replayed log's windows in words: the terminal's lines and replay.md's per-second tables."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from pywebbench.analyze.replay_fidelity import MIN_SECOND, ReplayFidelity
from pywebbench.results.model import TrialResult

TARGET = 0.05
"""Every judged second's sent requests within 5% of what the log scheduled."""


def replay_lines(found: Sequence[ReplayFidelity]) -> list[str]:
    """One line per stack: how closely its windows kept the log's pace, and what it answered."""
    by_label: dict[str, list[ReplayFidelity]] = defaultdict(list)
    for f in found:
        by_label[f.label].append(f)
    lines = []
    for label, windows in by_label.items():
        worst = max(w.worst_second for w in windows)
        judged = sum(w.judged_seconds for w in windows)
        sent = sum(w.sent for w in windows)
        answered = sum(w.answered for w in windows)
        waited = sum(w.waited for w in windows)
        verdict = "kept" if worst <= TARGET else "MISSED"
        behind = f"; {waited / sent:.1%} waited for a busy connection (the server fell behind)" if waited else ""
        lines.append(f"replay {label}: {len(windows)} window(s), {sent:,} offered; the log's pace {verdict} "
                     f"(worst of {judged} second(s) {worst:.1%} off, target {TARGET:.0%}); "
                     f"answered {answered / sent if sent else 0:.1%} in the window{behind}; "
                     f"bursts up to {max(w.peak_to_mean for w in windows):.1f}x the mean")
    return lines


def replay_markdown(trials: Sequence[TrialResult], found: Sequence[ReplayFidelity]) -> str:
    """replay.md: the summary, then each window's seconds (scheduled by the log, offered, answered,
    waited for a busy connection)."""
    out = ["# The log replayed", "",
           f"Each window plays its round's stretch of the recording at its offered rate. A second is judged "
           f"when the log scheduled at least {MIN_SECOND} requests in it; the target is every judged "
           f"second's offered requests within {TARGET:.0%} of the scheduled ones. A request that found every "
           "connection busy counts as offered at its time (the server held it; its latency counts the wait).",
           ""]
    out += [f"- {line}" for line in replay_lines(found)]
    for trial in trials:
        load = trial.load
        if load is None or not load.per_second:
            continue
        out += ["", f"## {trial.spec.trial_id}", "",
                "| second | scheduled | offered | answered | waited for a connection | offered/scheduled |",
                "|---:|---:|---:|---:|---:|---:|"]
        for second, (scheduled, sent, answered, waited) in enumerate(load.per_second):
            ratio = f"{sent / scheduled:.3f}" if scheduled else "-"
            out.append(f"| {second} | {scheduled} | {sent} | {answered} | {waited} | {ratio} |")
    return "\n".join(out) + "\n"
