"""The README's tuning example: its table and every figure around it, rendered from the run
committed under docs/results/readme-tuning/ (tuning.json and results.jsonl)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from pywebbench.results.store import load_results

RUN = "readme-tuning"
SHOWN = 5
"""The best rows shown, then the single sync worker they are read against."""


def _cell(config: dict[str, Any]) -> tuple[str, str]:
    return str(config.get("worker_class", "")), f"{config.get('workers', 1)} x {config.get('threads', 1)}"


def _row(entry: dict[str, Any]) -> str:
    measured = entry["measured"]
    worker_class, shape = _cell(measured["config"])
    low, high = measured["interval"]
    return (f"| {entry['rank']} | {worker_class} | {shape} | {measured['value']:,.0f} req/s | "
            f"[{low:,.0f}, {high:,.0f}) | {entry['to_best']:.3f} | {measured['cpu_ms_per_req']:.3f} | "
            f"{measured['rss_mb']:.0f} | {'=1' if entry['tied'] else ''} |")


def _single_sync(ranked: list[dict[str, Any]]) -> dict[str, Any] | None:
    return next((e for e in ranked if _cell(e["measured"]["config"]) == ("sync", "1 x 1")), None)


def _times(results_dir: Path) -> tuple[float, float]:
    """The run's wall time from its header to its last window, and the share spent in windows."""
    results = load_results(results_dir)
    start = datetime.fromisoformat(str(results.header.created_at))
    spans = [(datetime.fromisoformat(t.started_at), datetime.fromisoformat(t.finished_at)) for t in results.trials]
    wall = (max(end for _, end in spans) - start).total_seconds()
    measured = sum((end - begin).total_seconds() for begin, end in spans)
    return wall, measured / wall


def section(results: Path) -> str:
    folder = results / RUN
    path = folder / "tuning.json"
    if not path.exists():
        return "No tuning run committed yet (docs/results/readme-tuning/).\n"
    tuning = json.loads(path.read_text())
    ranked = tuning["ranked"]
    shown = ranked[:SHOWN]
    single = _single_sync(ranked)
    if single is not None and single not in shown:
        shown = [*shown, single]
    objective = str(tuning["objective"]).replace("<", " < ")
    lines = [f"| # | Class | Workers x threads | Capacity at {objective} | Bracket | vs best | CPU ms/req | "
             "Peak RSS MiB | Tie |", "|---:|---|---|---:|---|---|---:|---:|---|"]
    lines += [_row(entry) for entry in shown]
    wall, share = _times(folder)
    steps = [e["measured"]["interval"][1] / e["measured"]["interval"][0] - 1 for e in ranked[:SHOWN]]
    best = ranked[0]["measured"]
    classes = sorted({_cell(e["measured"]["config"])[0] for e in ranked})
    rest = [e["rank"] for e in ranked if e not in shown]
    held = (f", held {best['value'] / single['measured']['value']:.2f}x the rate of one sync worker under the "
            "same p99 target") if single is not None else ""
    return f"""\
{chr(10).join(lines)}

It measured {len(ranked)} configurations of Gunicorn's {' and '.join(classes)} workers in {wall:.0f} s,
{share:.0%} of it loading the app (each trial's warm-up and window; greenlet workers need
`--allow-monkeypatch`). Each capacity
is an open-loop rate search: its bracket runs from the highest rate that held to the lowest that
did not, so it is the search's resolution, not a confidence interval, and rows one step apart
({_span(steps)}) are as close as one run resolves. Rows {_ranges(rest)} are in
[the whole table](docs/results/readme-tuning/tuning.md), with the stages and the searches the
budget cut short. The answer, `{_short_deploy(tuning)}` (the printed line also binds, sets the
backlog and logging){held}.
"""


def _span(values: list[float]) -> str:
    low, high = f"{min(values):.1%}", f"{max(values):.1%}"
    return low if low == high else f"{low}-{high}"


def _short_deploy(tuning: dict[str, Any]) -> str:
    """The best's deploy line without the flags every line carries (bind, logging, backlog)."""
    words = str(tuning["deploy"][0][1]).split()
    drop = {"--bind": 1, "--log-level": 1, "--backlog": 1, "--no-control-socket": 0}
    kept: list[str] = []
    skip = 0
    for word in words:
        if skip:
            skip -= 1
        elif word in drop:
            skip = drop[word]
        else:
            kept.append(word)
    return " ".join(kept)


def _ranges(ranks: list[int]) -> str:
    """6, 7, 8, 9, 11, 12, 13 -> '6-9 and 11-13'."""
    runs: list[list[int]] = []
    for rank in sorted(ranks):
        if runs and rank == runs[-1][-1] + 1:
            runs[-1].append(rank)
        else:
            runs.append([rank])
    parts = [f"{r[0]}-{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1] if parts else "none"
