"""docs/method.md's section on the duet checked against what it did not fit (analyze/duet_checks.py),
read from the committed ranking runs under docs/results/rankings/."""

from __future__ import annotations

from pathlib import Path

from pywebbench.analyze.duet import DUET_RUN_SD
from pywebbench.analyze.duet_checks import CrossRun, Transitivity, cross_run, transitivity
from pywebbench.analyze.paired import Interval
from pywebbench.analyze.pairing import pair_sides
from pywebbench.results.model import ResultSet
from pywebbench.report.pages.summaries import summary_of
from pywebbench.results.store import load_results, results_path

RUNS = ("default-duet", "default-auto", "seed003-duet", "seed003-auto", "catalog")
"""The committed ranking runs that measured a workload by duet."""
ACROSS = (("default-duet", "default-auto", "both duet, one after the other"),
          ("default-duet", "default-even", "duet against interleaved"),
          ("default-auto", "default-even", "duet against interleaved"),
          ("catalog", "catalog-even", "125 stacks, duet under launch blocks against interleaved, a day apart"))
"""Pairs of runs over the same stacks and baseline."""


def _load(results: Path, name: str) -> ResultSet | None:
    folder = results / "rankings" / name
    return load_results(folder) if results_path(folder).exists() else None


def _transitivity_rows(results: Path) -> list[str]:
    rows = []
    for name in RUNS:
        run = _load(results, name)
        if run is None:
            continue
        for workload in dict.fromkeys(t.spec.workload for t in run.trials if t.spec.partner):
            trials = [t for t in run.trials if t.spec.partner and t.spec.workload == workload]
            found = transitivity(pair_sides(trials, lambda t: t.load.rps if t.load is not None else None))
            if found is not None:
                rows.append(_transitivity_row(name, workload, found))
    return rows


def _transitivity_row(name: str, workload: str, found: Transitivity) -> str:
    verdict = "compose" if found.p >= 0.05 else "**do not compose**"
    leads = ", ".join(f"`{label}` {rms:.1%}" for label, rms in found.leads)
    return (f"| {name} | {workload} | {found.residual_sd:.1%} ({found.residual_df}) | "
            f"{found.replicate_sd:.1%} ({found.replicate_df}) | {found.f:.2f} | {found.p:.3f} | {verdict} | {leads} |")


def _intervals(folder: Path) -> dict[str, Interval]:
    """Each stack's hello ratio interval to the run's baseline."""
    return {r.label: r.ratio_interval for r in summary_of(folder).rows
            if r.spec.workload == "hello" and r.ratio_interval is not None}


def _across_rows(results: Path) -> list[tuple[str, CrossRun]]:
    rows = []
    for a, b, what in ACROSS:
        folder_a, folder_b = results / "rankings" / a, results / "rankings" / b
        if not results_path(folder_a).exists() or not results_path(folder_b).exists():
            continue
        found = cross_run(_intervals(folder_a), _intervals(folder_b))
        if found is not None:
            rows.append((f"| {a} against {b} ({what}) | {found.stacks} | {found.shift:+.1%} "
                         f"(±{1.96 * found.shift_se:.1%}) | {found.rms_z:.2f} | {found.rms_z_centred:.2f} | "
                         f"{found.beyond} | {found.run_sd:.2%} |", found))
    return rows


def section(results: Path) -> str:
    transitive = _transitivity_rows(results)
    across = _across_rows(results)
    if not transitive and not across:
        return "No committed duet ranking run to check (docs/results/rankings/)."
    failing = [row for row in transitive if "do not compose" in row]
    both_duet = next((found for row, found in across if "both duet" in row), None)
    run_line = (f"Between the two duet runs every ratio moved {both_duet.shift:+.1%} together (the baseline's "
                f"offset), a run term of about "
                f"{both_duet.run_sd:.1%} per run from dissimilar stacks (on one degree of freedom) against the "
                f"{DUET_RUN_SD:.2%} fitted from pairs of a stack with itself: a duet's ratio to a baseline unlike "
                "its stack carries the baseline's own run offset, which its interval does not. Positions "
                "against each other (the centred column) reproduce." if both_duet is not None else "")
    return f"""\
**Transitivity.** A round fits one level per stack to all of its pairs; the residual (A/B . B/C
against A/C, in log terms) is set against the same pair's spread over the rounds that measured it
again, which involves no fit. F near 1: the pairs compose; far above: a stack's ratio depends on its
partner. {len(failing)} of {len(transitive)} cells do not compose at 5%.

| run | workload | residual sd (df) | same pair again, sd (df) | F | p | pairs | most residual |
|---|---|---:|---:|---:|---:|---|---|
{chr(10).join(transitive)}

**Across runs.** The same stacks' hello ratios to the same baseline in two runs: the shift every
ratio shares (the baseline's own offset between runs), each stack's z with the shift left in, and
with it removed (RMS near 1 and about 5% beyond 1.96 if the intervals are honest about the stacks).

| runs | stacks | common shift (95%) | RMS z | RMS z, shift removed | beyond 1.96 | run term it implies |
|---|---:|---:|---:|---:|---:|---:|
{chr(10).join(row for row, _ in across)}

{run_line}
"""
