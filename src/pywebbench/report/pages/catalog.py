"""docs/catalog.md: every stack of the catalog ranked on hello from one committed run, each with
its ratio to the baseline and interval, CPU per request, peak memory and its verdict against
the next one down; the best of each concurrency model; and every catalog stack the run could
not rank, with why."""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from pathlib import Path

from pywebbench.analyze.verdict_family import rule as verdict_rule
from pywebbench.analyze.agreement import kendall_tau_b
from pywebbench.analyze.duet import window_noise
from pywebbench.analyze.pairing import app_cpu_of, pair_sides, requests_per_cpu_second, rps_of
from pywebbench.analyze.rows import Row, ranked_rows, summarize
from pywebbench.catalog.registry import build_catalog
from pywebbench.report.markdown import code, escape
from pywebbench.report.pages.coverage import read_record
from pywebbench.report.pages.rankings import (
    CPU,
    RATIO,
    RSS,
    STACK,
    VERDICT,
    Column,
    half_widths,
    ranking_table,
    ratio_cell,
    verdict_line,
)
from pywebbench.report.pages.seeds.common import run_line
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results, results_path

FOLDER = "rankings/catalog"
COMMAND = ("pywebbench run --stack '*:*' --workload hello --method duet --launch-block 15 --rounds-per-launch 1 "
           "--budget 100m --out docs/results/rankings/catalog")
EVEN_FOLDER = "rankings/catalog-even"
EVEN_COMMAND = ("pywebbench run --stack '*:*' --workload hello --launch-block 15 --rounds-per-launch 1 "
                "--budget 100m --out docs/results/rankings/catalog-even")


def render(results: Path) -> str:
    folder = results / FOLDER
    head = ["# The whole catalog on hello",
            "<!-- Built by scripts/docs from docs/results/rankings/catalog; edit "
            "src/pywebbench/report/pages/catalog.py, not this file. -->",
            "Every stack `pywebbench list` offers, on the smallest workload (`/hello`), from one run on this "
            "project's shared 2-core VM with nothing else running. The stacks ran in launch blocks (a few "
            "live servers and the baseline at a time, the blocks drawn afresh each cycle) and were loaded two "
            "at a time by the sparse duet: each stack beside its neighbours in the ranking so far and beside a "
            "random cycle's (`docs/method.md`). A ratio is relative efficiency at an equal share of one CPU "
            "against the baseline; its interval is a 95% interval at the run's shape, whose coverage the "
            "duet grid of `docs/method.md` shows by simulation. *Against the next*: the row against the one "
            "below it, different (their paired ratio tells them apart), equivalent (within the run's "
            "`--equivalence` margin by two one-sided tests) or unresolved (neither). " + verdict_rule(),
            f"`{COMMAND}`"]
    if not results_path(folder).exists():
        return "\n\n".join([*head, "Not measured yet."]) + "\n"
    run = load_results(folder)
    summary = summarize(run)
    rated = ranked_rows(summary.rows)
    parts = [*head, run_line(run, summary, ties=False), verdict_line(summary, rated), _spread_line(run, rated, results), _table(rated),
             "## The best of each concurrency model", _best(rated),
             "## Each server and worker model across frameworks", _ACROSS_NOTE,
             _across(rated, lambda r: r.label.split(":", 1)[1], "Server and model"),
             "## Each framework across servers", _ACROSS_NOTE,
             _across(rated, lambda r: r.label.split(":", 1)[0], "Framework"),
             "## Not ranked", _unranked(summary.rows),
             "## The same budget, every stack in every round", _EVEN_NOTE, f"`{EVEN_COMMAND}`",
             _against_even(results, rated, summary.baseline)]
    return "\n\n".join(p for p in parts if p) + "\n"


def _spread_line(run: ResultSet, rows: list[Row], results: Path) -> str:
    """What the intervals' width comes from: the pair noise this run's windows showed, beside the
    calibrations' and what the simulation of duet runs in launch blocks gives at each."""
    halves = sorted(math.log(r.ratio_interval.high / r.ratio_interval.center) for r in rows
                    if r.ratio_interval is not None)
    noise = window_noise(pair_sides(run.trials, rps_of))
    gaps = [math.log(a.ratio / b.ratio) for a, b in zip(rows, rows[1:]) if a.ratio and b.ratio]
    if not halves or noise is None or not gaps:
        return ""
    blocks = read_record(results, "duet-blocks.json")
    simulated = ""
    if blocks and blocks.get("schema") == 2:
        largest = max(c["stacks"] for c in blocks["cells"])
        noises = blocks["noises"]
        cells = [c for c in blocks["cells"] if c["stacks"] == largest and c["launches"] == 3]
        parts = [f"at a side's noise of {noises[c['noise']]['side_sd']:.1%} ({c['noise']}, a window's about "
                 f"{noises[c['noise']]['side_sd'] * math.sqrt(2):.1%}) ±{c['median_half_width']:.1%}, covering "
                 f"{c['covered'] / c['intervals']:.1%}" for c in cells]
        simulated = (f" Simulated duet runs of {largest} stacks in blocks of {cells[0]['block']}, three launches "
                     f"each (`docs/method.md`): {'; '.join(parts)}." if cells else "")
    return (f"Each window's log ratio lay {noise[0]:.1%} (RMS, {noise[1]:,} degrees of freedom) from its launch's "
            f"least-squares fit.{_where_the_noise_is(run)} That noise is what makes "
            f"the median interval ±{math.expm1(statistics.median(halves)):.1%}.{simulated} Adjacent rows here are "
            f"a median {math.expm1(statistics.median(gaps)):.1%} apart, so at this noise most of them cannot be "
            "told apart in this run's time on 2 cores.")


def _where_the_noise_is(run: ResultSet) -> str:
    """The same fit's noise in each side's CPU share and in its requests per CPU-second: whether
    the sides took unequal shares of the CPU or made unequal use of equal ones."""
    share = window_noise(pair_sides(run.trials, app_cpu_of))
    use = window_noise(pair_sides(run.trials, requests_per_cpu_second))
    if share is None or use is None:
        return ""
    said = (f" The two sides' CPU-seconds lay {share[0]:.1%} from the same fit, their requests per CPU-second "
            f"{use[0]:.1%}")
    if share[0] < use[0] / 2:
        return (f"{said}: each side took its equal share of the CPU, and the noise is in how much work a stack "
                "made of it from one window to the next, more than in the calibrations' pairs of one stack with "
                "itself, whose windows move alike.")
    return f"{said}: the sides' shares of the CPU varied as much as what they made of them."


_INTERFACE = Column("Interface", lambda row: escape(row.stack.interface))
_CONCURRENCY = Column("Concurrency", lambda row: escape(row.stack.concurrency))


def _table(rows: list[Row]) -> str:
    return ranking_table(rows, (STACK, _INTERFACE, _CONCURRENCY, RATIO, CPU, RSS, VERDICT))


def _best(rows: list[Row]) -> str:
    """The highest-ranked stack of each concurrency model, with how many of that model ranked."""
    firsts: dict[str, tuple[int, Row]] = {}
    counts: dict[str, int] = {}
    for place, row in enumerate(rows, start=1):
        model = row.stack.concurrency
        counts[model] = counts.get(model, 0) + 1
        firsts.setdefault(model, (place, row))
    lines = ["| Concurrency | Stacks ranked | Best | Its place | Ratio [95%] |", "|---|---:|---|---:|---|"]
    for model, (place, row) in sorted(firsts.items(), key=lambda item: item[1][0]):
        lines.append(f"| {escape(model)} | {counts[model]} | {code(row.label)} | {place} | {ratio_cell(row)} |")
    return "\n".join(lines)


_ACROSS_NOTE = ("The median of its rows' ratios (a summary of the table above, with no interval of its "
                "own), its best and worst row with their intervals, and their places in the ranking.")


def _across(rows: list[Row], key: Callable[[Row], str], title: str) -> str:
    """One line per group of rows (a server across frameworks, a framework across servers)."""
    places = {r.label: i for i, r in enumerate(rows, start=1)}
    groups: dict[str, list[Row]] = {}
    for row in rows:
        groups.setdefault(key(row), []).append(row)
    medians = {name: statistics.median(r.ratio or 0.0 for r in members) for name, members in groups.items()}
    lines = [f"| {title} | Stacks | Median ratio | Best | Worst |", "|---|---:|---:|---|---|"]
    for name in sorted(groups, key=lambda n: -medians[n]):
        members = groups[name]
        best, worst = members[0], members[-1]  # rows come ranked
        lines.append(f"| {code(name)} | {len(members)} | {medians[name]:.2f} | "
                     f"{code(best.label)} {ratio_cell(best)}, #{places[best.label]} | "
                     + (f"{code(worst.label)} {ratio_cell(worst)}, #{places[worst.label]} |" if worst is not best
                        else "- |"))
    return "\n".join(lines)


_EVEN_NOTE = ("The comparison the design is judged by: the same stacks, blocks and budget under the interleaved "
              "method with every stack in every round (each alone on the CPU in its window, its ratio paired "
              "with the baseline's window in the same round), run alone on the same VM a day after the duet "
              "run (the run lines give both dates). Its full table is in `docs/rankings.md`. An interleaved "
              "ratio is req/s alone on the CPU, a duet ratio efficiency at an equal share of it, so the two "
              "scales differ; "
              "the orders are compared by Kendall's tau-b of their points (no interval: the duet's windows "
              "are pairs of stacks, not rounds of ratios to the baseline).")


def _against_even(results: Path, duet_rows: list[Row], duet_baseline: str) -> str:
    """What the design bought: both runs' interval widths and adjacent verdicts side by side,
    and how far their orders agree."""
    folder = results / EVEN_FOLDER
    if not results_path(folder).exists():
        return "Not measured yet."
    run = load_results(folder)
    summary = summarize(run)
    even_rows = ranked_rows(summary.rows)
    lines = ["| Design | Stacks ranked | Launches of a stack (median) | Ratios with an interval | Half-width, median "
             "(range) | Different | Equivalent | Unresolved |", "|---|---:|---:|---:|---|---:|---:|---:|",
             _design_row("sparse duet, launch blocks", duet_rows, duet_baseline),
             _design_row("interleaved, every stack every round", even_rows, summary.baseline)]
    both = sorted({r.label for r in duet_rows} & {r.label for r in even_rows})
    duet_ratio = {r.label: r.ratio for r in duet_rows}
    even_ratio = {r.label: r.ratio for r in even_rows}
    tau = kendall_tau_b([duet_ratio[s] or 0.0 for s in both], [even_ratio[s] or 0.0 for s in both])
    agreement = ("" if tau is None else
                 f"The two orders over the {len(both)} stacks both ranked: Kendall's tau-b {tau:+.2f}.")
    return "\n\n".join(p for p in (run_line(run, summary, ties=False), "\n".join(lines), agreement) if p)


def _design_row(design: str, rows: list[Row], baseline: str) -> str:
    """One design's line: how many launches a stack had, how wide its intervals came and how
    many adjacent pairs it told apart."""
    halves = sorted(half_widths(rows, baseline))
    verdicts = [r.next_verdict for r in rows if r.next_verdict]
    spread = f"±{statistics.median(halves):.1%} (±{halves[0]:.1%} to ±{halves[-1]:.1%})" if halves else "-"
    launches = statistics.median(r.launches for r in rows if r.label != baseline) if len(rows) > 1 else 0
    return (f"| {design} | {len(rows)} | {launches:g} | {len(halves)} | {spread} | {verdicts.count('different')} | "
            f"{verdicts.count('equivalent')} | {verdicts.count('unresolved')} |")


def _unranked(rows: tuple[Row, ...]) -> str:
    """Catalog stacks without a ratio here: in the run but never measured right, or not in it."""
    ranked = {r.label for r in ranked_rows(rows)}
    lines = [f"- {code(r.label)}: {escape(r.status)}" + (f" ({escape(_first_line(r.note))})" if r.note else "")
             for r in rows if r.label not in ranked]
    present = {r.stack.id for r in rows}
    if absent := [code(s.id) for s in build_catalog().stacks if s.id not in present]:
        lines.append(f"- Not in the run ({len(absent)}): {', '.join(absent)}")
    return "\n".join(lines) if lines else "Every catalog stack is ranked above."


def _first_line(text: str) -> str:
    return text.splitlines()[0] if text else text
