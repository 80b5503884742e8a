"""docs/method.md's sections on noisy stacks and on the verdicts' error rates, from the records
scripts/coverage commits (docs/results/coverage/noise-classes.json, verdict-errors.json)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pywebbench.analyze.verdict_family import rule
from pywebbench.report.pages.coverage import HIGH, LOW, coverage_mark, read_record


def classes_section(results: Path) -> str:
    data = read_record(results, "noise-classes.json")
    if data is None:
        return "No noise-class simulation committed yet (`scripts/coverage`)."
    cells: list[dict[str, Any]] = data["cells"]
    classes = list(dict.fromkeys(c["class"] for c in cells))
    shapes = list(dict.fromkeys((c["launches"], c["rounds"], c["stacks"]) for c in cells))
    by = {(c["class"], c["launches"], c["rounds"], c["stacks"]): c for c in cells}
    lines = ["| launches x rounds, stacks | " + " | ".join(classes) + " |", "|---|" + "---|" * len(classes)]
    for launches, rounds, stacks in shapes:
        lines.append(f"| {launches} x {rounds}, {stacks} | "
                     + " | ".join(coverage_mark(by[(name, launches, rounds, stacks)]) for name in classes) + " |")
    rate = {(c["class"], c["launches"], c["rounds"], c["stacks"]): c["covered"] / c["intervals"]
            for c in cells if c["intervals"]}
    held = sorted({launches for _, launches, _, _ in rate if all(
        LOW <= value <= HIGH for (_, l, _, _), value in rate.items() if l >= launches)})
    short = [value for (name, l, _, _), value in rate.items() if name != "1x" and held and l < held[0]]
    said = (f"From {held[0]} launches on every class covers {LOW:.0%}-{HIGH:.0%}; on fewer, a stack noisier "
            f"than its table is covered {min(short):.0%}-{max(short):.0%}." if held and short else
            "No class covers within the band at every shape.")
    return f"""\
The grid above averages over a table's stacks. Here one stack is 1.5, 2 or 4 times noisier than
its table (or the baseline twice as noisy), the others of the usual spread, and that stack's own
intervals are scored (the baseline class: every stack's), {min(c["runs"] for c in cells):,}-{max(c["runs"] for c in cells):,}
runs per cell. A stack's spread is its own, not its table's, where it lies above a quantile of
the table's distribution that is lower on few launches (`analyze/moderation.py`, OUTLYING_BY_DF).

{chr(10).join(lines)}

{said} On two launches a stack has one degree of freedom of its own, and no test tells a noisier
stack from its table there; on three the test is weak. A noisy stack's row is trustworthy from
four launches (`--repeats`)."""


def errors_section(results: Path) -> str:
    data = read_record(results, "verdict-errors.json")
    if data is None:
        return "No simulation of the verdicts committed yet (`scripts/coverage`)."
    lines = ["| shape | noise | design | family control | 'different' calls per run | false among them (FDR) "
             "| any false (FWER) | 'equivalent' calls per run | false among them | any false |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for c in data["cells"]:
        lines.append(f"| {c['shape']} | {c['noise']} | {c.get('design', 'complete')} | {c['control']} "
                     f"| {c['different_calls']:.1f} | {c['different_fdr']:.1%} "
                     f"| {c['different_any']:.1%} | {c['equivalent_calls']:.1f} | {c['equivalent_fdr']:.1%} "
                     f"| {c['equivalent_any']:.1%} |")
    return f"""\
{rule()} Simulated runs of the committed rankings' shapes (each as a complete design), about half
of their stacks tied to another's level so that alike neighbours are common, judged by the
report's own code (`analyze/verdict_errors.py`); a 'different' call is false where the two truths
are equal or ordered the other way, an 'equivalent' call where they lie more than
±{data["margin"]:.0%} apart. The noise is the coverage grid's (a window's
{data["noises"]["catalog-like"]["round_sd"]:.0%}) and the calibrations' quieter one (a window's
{data["noises"]["calibration-like"]["round_sd"]:.0%}, where many more pairs can be called). `none` is each pair at {data["level"]:.0%} on its own, as the tables
judged before; the default is `{data["default_control"]}`.

{chr(10).join(lines)}

{_adaptive_said(data)}"""


def _adaptive_said(data: dict[str, Any]) -> str:
    if not any(c.get("design") == "adaptive" for c in data["cells"]):
        return "Adaptive allocation's repeated looks are not in this simulation yet."
    return ("`adaptive` is `--allocation adaptive`'s ranking rule with its repeated looks "
            "(`verdict_errors.retired_by_verdicts`): after two pilot launches, before every launch, the "
            "table so far is ranked and judged as the report judges it, a stack resolved against both "
            "neighbours leaves for good, the complete design's windows are spread over up to three times "
            "its launches, and the verdicts are those of the table where it stopped, under the default "
            "control.")
