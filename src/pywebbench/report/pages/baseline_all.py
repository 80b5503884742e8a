"""docs/method.md's section on the baseline estimated from all its windows: its simulated
coverage beside the paired intervals' (docs/results/coverage/baseline-all.json, scripts/coverage)
and seed 003's committed interleaved run re-derived with it."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np

from pywebbench.analyze.baseline_all import BASELINE_OUTLYING, baseline_standing, fit, table_intervals_all, window_array
from pywebbench.analyze.paired import Observation, paired_ratios, table_intervals
from pywebbench.analyze.pairing import observations, rps_of
from pywebbench.analyze.rows import run_baseline
from pywebbench.report.pages.coverage import HIGH, LOW, read_record
from pywebbench.results.store import load_results

SEED003 = "rankings/seed003-even"
RUNS = ((SEED003, ("hello", "cpu")), ("rankings/catalog-even", ("hello",)))
"""The committed interleaved runs re-derived: seed 003's (every stack in every launch) and the
catalog's in launch blocks of 15."""


def _shape(cell: dict[str, Any]) -> str:
    rounds = "round" if cell["rounds"] == 1 else "rounds"
    if cell["block"] is None:
        return f"{cell['stacks']} stacks, {cell['cycles']} launches of {cell['rounds']} {rounds}"
    return (f"{cell['stacks']} stacks in blocks of {cell['block']}, {cell['cycles']} cycles of one launch "
            f"each of {cell['rounds']} {rounds}")


def _coverage(scored: dict[str, Any]) -> float:
    return float(scored["covered"]) / float(scored["intervals"])


def _cover(scored: dict[str, Any]) -> str:
    share = _coverage(scored)
    return f"{share:.1%}{'' if LOW <= share <= HIGH else ' (!)'}"


def _saved(cell: dict[str, Any]) -> str:
    if cell["paired_windows_for_same_width"] is None:
        return "-"
    more = cell["paired_windows_for_same_width"] - cell["windows"]
    return f"{cell['paired_windows_for_same_width']:,} ({more / cell['windows']:.0%} more)"


def simulation(results: Path) -> str:
    data = read_record(results, "baseline-all.json")
    if data is None:
        return "Not simulated yet: run `scripts/coverage`."
    cells = data["cells"]
    lines = ["| design | noise | windows | coverage: all windows | paired | median half-width: all windows | "
             "paired | paired, windows for the same width |", "|---|---|---|---|---|---|---|---|"]
    for c in cells:
        lines.append(f"| {c['name']}: {_shape(c)} | {c['noise']} | {c['windows']:,} | {_cover(c['new'])} | "
                     f"{_cover(c['paired'])} | ±{c['new']['median_half_width']:.1%} | "
                     f"±{c['paired']['median_half_width']:.1%} | {_saved(c)} |")
    shares = [_coverage(c["new"]) for c in cells]
    inside = sum(LOW <= s <= HIGH for s in shares)
    return ("\n".join(lines) + f"\n\n{inside} of {len(shares)} cells of the new estimator cover between "
            f"{LOW:.0%} and {HIGH:.0%} (lowest {min(shares):.1%}, highest {max(shares):.1%}).")


def _sets(results: Path, folder: str, workload: str) -> tuple[str, dict[str, list[Observation]]]:
    run = load_results(results / folder)
    trials = [t for t in run.trials if t.spec.workload == workload]
    baseline = run_baseline(run)
    labels = sorted({t.spec.label for t in trials})
    return baseline, {label: observations([t for t in trials if t.spec.label == label], rps_of) for label in labels}


def _median(values: list[float]) -> str:
    return f"±{statistics.median(values):.1%}" if values else "-"


def rederived(results: Path) -> str:
    """The committed interleaved runs of RUNS re-derived both ways."""
    lines = ["| run | workload | ratios | median half-width: paired | all windows | baseline's spread in its "
             "table (quantile) | all windows, the baseline pulled to its table regardless |",
             "|---|---|---|---|---|---|---|"]
    for folder, workloads in RUNS:
        if (results / folder).is_dir():
            lines.extend(_rederived(results, folder, workload) for workload in workloads)
    return "\n".join(lines) + (f"\n\nAbove the {BASELINE_OUTLYING:.2f} quantile the baseline keeps its own spread: in a "
            "complete design that is the paired intervals, in launch blocks its own launches' spread.")


def _rederived(results: Path, folder: str, workload: str) -> str:
    baseline, sets = _sets(results, folder, workload)
    others = [label for label in sets if label != baseline]
    paired, _ = table_intervals({label: paired_ratios(sets[label], sets[baseline]) for label in others})
    new = table_intervals_all(sets, baseline)
    logs = window_array([sets[baseline], *(sets[label] for label in others)])
    standing = baseline_standing(logs)
    pulled = fit(logs, guard=False).half
    return (f"| `{folder}` | {workload} | {len(others)} | "
            f"{_median([i.half_width for i in paired.values() if i])} | "
            f"{_median([i.half_width for i in new.values() if i])} | "
            f"{'-' if standing is None else f'{standing:.2f}'} | "
            f"{_median([float(np.expm1(h)) for h in pulled if np.isfinite(h)])} |")


def section(results: Path) -> str:
    """The method page's section: what the estimator does, its simulation, seed 003 re-derived."""
    return f"""\
### The baseline from all its windows

`python -m pywebbench.analyze.baseline_all_coverage docs/results/coverage/baseline-all.json` (in `scripts/coverage`)

A paired ratio divides each window by the baseline's in the same round, so every ratio carries
the baseline's noise of the launches it shares, on those launches - 1 degrees of freedom; under
launch blocks a ratio shares one baseline launch per cycle out of one per block.
`analyze/baseline_all.py` fits every stack's launch means, the baseline's included, as one
two-way table (a stack's level plus a launch's effect, read off every stack the launch held, a
round's machine speed first taken out by every stack of the round) and reads each ratio as the
stack's level minus the baseline's: the baseline's level comes from all its launches and weighs
in a launch's effect as one of its stacks. Each ratio's variance is the sum of every stack's
launch-level variance times the weight the fit puts on its cells, each variance moderated across
the table as the paired spreads are (the baseline's among them) and the degrees of freedom
Satterthwaite's. A baseline whose spread lies above the {BASELINE_OUTLYING:.2f} quantile of its
table's keeps its own spread, on its own degrees of freedom: its share is in every ratio, and
pulled toward a quieter table it would under-cover them all at once. Where its own degrees of
freedom are fewer than the paired estimator gives its share (every stack in every launch, where
the fit spends some on the launches' effects), the table keeps the paired intervals.

Simulated on the coverage grid's noise (and with the baseline, or one stack, twice as noisy:
that stack's own ratio scored), beside the paired intervals on the same windows; the last
column is the windows the paired intervals need, in whole launches (or cycles of blocks) more
of the same design, for a median half-width as narrow as the new one's (1x only):

{simulation(results)}

The committed interleaved runs re-derived both ways: seed 003's (every stack in every launch)
and the catalog's (launch blocks of 15):

{rederived(results)}

The report's intervals stay paired for now. Where every stack runs in every launch (the default
run, seed 003) the new intervals gain little and on a quiet baseline are wider; the gain is
under launch blocks, where a ranking's pair verdicts (`analyze/neighbours.py`) and the family's
error rate (`analyze/verdict_errors.py`) rest on the paired intervals and would need pair
contrasts from the same fit, simulated, before they switch with the ratios. The duet's ratios
are least-squares fits of pairs, which this model of one window per stack does not describe."""
