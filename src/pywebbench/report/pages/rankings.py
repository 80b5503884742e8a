"""docs/rankings.md: many stacks ranked on hello, each run committed under docs/results/, every
stack with its ratio and interval, CPU per request, peak memory and its verdict against the
next one down, so the designs (interleaved, duet, launch blocks) can be read side by side."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pywebbench.analyze.verdict_family import rule as verdict_rule
from pywebbench.analyze.rows import Row, Summary, ranked_rows, run_baseline, run_equivalence
from pywebbench.analyze.shards import chain
from pywebbench.analyze.stats import half_width
from pywebbench.report.markdown import code, escape
from pywebbench.report.pages.seeds.common import run_line
from pywebbench.report.shards import render_sharded
from pywebbench.report.pages.summaries import summary_of
from pywebbench.results.store import load_results, results_path


@dataclass(frozen=True)
class Ranked:
    folder: str
    """Under docs/results/."""
    title: str
    command: str
    about: str


RUNS = (
    Ranked("default-run/1", "The default run, interleaved", "pywebbench run --out docs/results/default-run/1",
           "`./scripts/bench`'s run on 2026-11-25, when it was `pywebbench run` (interleaved): 14 stacks on "
           "hello, every stack in every round, one window each. It now runs `--method auto`: the last run "
           "of the default stacks below."),
    Ranked("rankings/default-even", "The default stacks, interleaved, at the duet's budget",
           "pywebbench run --budget 10m --out docs/results/rankings/default-even",
           "The default run's stacks and method (every stack in every round) with a 10-minute budget, run "
           "right after the `--method auto` run below on the same quiet machine, as the comparison for it."),
    Ranked("rankings/default-adaptive", "The default stacks, interleaved, adaptive by the ranking",
           "pywebbench run --allocation adaptive --repeats 4 --rounds-per-launch 2 --budget 10m "
           "--out docs/results/rankings/default-adaptive",
           "The default run's 14 stacks and method, at the duet run's budget, with `--allocation adaptive` "
           "and no `--precision`: after a pilot of two launches of two rounds, each launch starts only the "
           "stacks not yet different from or equivalent to both neighbours, and the baseline "
           "(`analyze/allocation.py`). The interleaved run above spent the same time on every stack."),
    Ranked("rankings/default-duet", "The default stacks, sparse duet",
           "pywebbench run --method duet --budget 10m --rounds-per-launch 1 --out docs/results/rankings/default-duet",
           "The same 14 stacks loaded two at a time on the same CPU with equal CPU shares: each round "
           "pairs every stack with its neighbours in the order the rounds so far give and with a random "
           "cycle's, 28 windows a round (`plan/duet_design.py`). A duet ratio is relative efficiency at an equal "
           "share of one CPU, not the req/s a stack reaches alone on it, so its scale differs from the "
           "interleaved run's (bottle:bjoern 14.8 against 12.1 there); the order is the same but for the two "
           "rows the interleaved run could not tell apart (`flask:gunicorn-gthread` and the baseline)."),
    Ranked("rankings/default-auto", "The default stacks, --method auto (a duet for hello)",
           "pywebbench run --method auto --budget 10m --rounds-per-launch 1 --out docs/results/rankings/default-auto",
           "What `./scripts/bench` runs: the 14 default stacks with the method chosen for the workload "
           "(`plan/method_choice.py`: hello keeps the stacks on the CPU, so a duet). The same design as the duet "
           "run above, made with today's harness, in which a stack found holding connections it never serves "
           "(bottle:bjoern) is no longer waited for by either drain after its first stall."),
    Ranked("rankings/seed003-duet", "Seed 003's 26 stacks, sparse duet",
           "pywebbench run --preset seed003 --method duet --duration 4 --budget 30m "
           "--out docs/results/rankings/seed003-duet",
           "Seed 003's stacks on its two workloads (hello, and a CPU-bound endpoint), 200 connections, "
           "loaded two at a time: 52 windows a round per workload (its page, `docs/seed-003.md`, reads the "
           "interleaved run). Made after windows began to wait for their settle's queue (2026-11-26), before "
           "the settle was capped at 32 connections: the budget bought 1 round in 1 launch, so no interval. "
           "Of its 1,596 s, 576 s (36%) went to the live servers serving what each 200-connection settle left "
           "queued, 480 s (30%) to draining what each window left, and 437 s (27%) to measuring: at 200 "
           "connections a `cpu` side serves about 25 req/s, so each queue is some 8 s of work. The run before "
           "(the same command without those waits) read 0 req/s in every `cpu` window. Here the `cpu` ratios "
           "lie within 0.97-1.08 of the baseline but for the five uWSGI stacks (0.70-0.74, with about 1.4 times the CPU "
           "per request): the sieve, not the framework or the worker model, is the work."),
    Ranked("rankings/seed003-auto", "Seed 003's 26 stacks, --method auto (a duet for hello and cpu)",
           "pywebbench run --preset seed003 --method auto --duration 4 --budget 30m "
           "--out docs/results/rankings/seed003-auto",
           "Issue 25's seed 003 target (every ratio within ±5% in 30 minutes), with the harness of "
           "2026-11-27 (each window waits for the queues before it). `--method auto` chose the duet for both "
           "workloads. A round of 26 stacks on two workloads took 701 s (a launch 133 s): the budget bought 2 "
           "rounds in 1 launch (the preset's 2 rounds per launch), so no interval. Since this run, a run under a "
           "budget that sees after its first round that only one round per launch buys the launches an "
           "interval needs switches to one and says so (`measure/rounds.py`); here that would have made 2 "
           "launches of one round, whose duet intervals for 26 stacks are about ±8% in the duet grid of "
           "`docs/method.md` (the calibrations' noise), not ±5%."),
    Ranked("rankings/seed003-even", "Seed 003's 26 stacks, interleaved, at the same budget",
           "pywebbench run --preset seed003 --duration 4 --budget 30m --out docs/results/rankings/seed003-even",
           "The preset's own design (every stack in every round, one at a time) right after the run above, on "
           "the same quiet machine: 5 rounds in 3 launches in 1,675 s. On `cpu` it meets the target the duet "
           "missed: every ratio within ±2.7-4.8%, 23 of 25 adjacent pairs different or equivalent within ±5%. A "
           "`cpu` window alone on the stack CPU is quiet (each request is some 7.5 ms of the sieve), and a "
           "duet's sides there each get half the CPU while 200 connections queue behind them. On `hello` the "
           "interleaved windows are noisy (±11-37%) where the 14-stack duet gave ±5.6%: `--method auto` picks "
           "one method for a run, and this preset wants the duet for `hello` and interleaved for `cpu`."),
    Ranked("rankings/catalog", "The whole catalog on hello",
           "pywebbench run --stack '*:*' --workload hello --method duet --launch-block 15 --rounds-per-launch 1 "
           "--budget 100m --out docs/results/rankings/catalog",
           "Every stack that runs here, in launch blocks of 15 and the baseline, one round per launch; "
           "`docs/catalog.md` is its own page. It ran 3-4 launches of each stack in its 100 minutes. Its "
           "windows are noisier than the 14-stack duet's (each side took its equal share of the CPU, but "
           "what a stack made of it moved more from window to window; the catalog page measures both from the "
           "run), and most neighbours are closer than that noise can "
           "tell apart in this time. Its intervals were first published about four times this wide: each "
           "launch's common part had been read as the mean of the stacks it held, which under launch blocks "
           "is their mean level (`analyze/moderation.launch_effects`)."),
    Ranked("rankings/catalog-even", "The whole catalog on hello, interleaved, at the same budget",
           "pywebbench run --stack '*:*' --workload hello --launch-block 15 --rounds-per-launch 1 --budget 100m "
           "--out docs/results/rankings/catalog-even",
           "The comparison for the run above: the same stacks, blocks and budget, every stack in every round, "
           "each alone on the CPU in its window, run alone a day after it: 7 launches of one round for each "
           "stack (63 in all) against the duet's 3-4, and intervals half as wide again (median ±15.1% against "
           "±9.8%); one adjacent pair told apart (the table marks it). `docs/catalog.md` sets the two side by side."),
)


def render(results: Path) -> str:
    parts = ["# Rankings of many stacks",
             "<!-- Built by scripts/docs from docs/results/; edit src/pywebbench/report/pages/rankings.py, "
             "not this file. -->",
             "Each section is one run made on this project's shared 2-core VM with nothing else running, "
             "its results committed in the folder it names; `pywebbench report FOLDER` shows it again. "
             "*Against the next*: the row against the one below it, different (their paired ratio "
             "tells them apart), equivalent (within the run's `--equivalence` margin by two one-sided tests) or "
             "unresolved (neither). " + verdict_rule()]
    for ranked in RUNS:
        parts.append(_section(results, ranked))
    parts.append(_sharded(results))
    return "\n\n".join(parts) + "\n"


SHARDED = Ranked("rankings/shards-netns", "Shards across hosts, on the netns rig",
                 "pywebbench run --shards 2 --topology netns --stack flask:gunicorn-sync --stack falcon:gunicorn-sync "
                 "--stack bottle:gunicorn-sync --stack django:gunicorn-sync --stack starlette:uvicorn "
                 "--stack hug:gunicorn-sync --stack falcon:uvicorn --budget 5m --rounds-per-launch 1 "
                 "--out docs/results/rankings/shards-netns",
                 "Two shards at once, each its own run on its own rig of network namespaces (generator, app and db "
                 "hosts over SSH), each measuring the baseline, the two overlap stacks and its block. The rigs share "
                 "this machine's two CPUs, so the shards' windows overlap in time and disturb each other: this shows "
                 "the mechanism (and what the host term makes of two shards), not the speedup, which needs hosts of "
                 "their own.")


def _sharded(results: Path) -> str:
    folder = results / SHARDED.folder
    head = f"## {SHARDED.title}\n\n{SHARDED.about}\n\n`{SHARDED.command}`"
    shards = {int(d.name.removeprefix("shard-")): d for d in folder.glob("shard-*") if results_path(d).exists()}
    if len(shards) < 2:
        return head + "\n\nNot run yet."
    measured = {n: load_results(d) for n, d in sorted(shards.items())}
    first = measured[min(measured)]
    run = chain(measured, run_baseline(first), run_equivalence(first))
    return head + "\n\n" + render_sharded(run, level=3).rstrip()


def _section(results: Path, ranked: Ranked) -> str:
    folder = results / ranked.folder
    head = f"## {ranked.title}\n\n{ranked.about}\n\n`{ranked.command}`"
    if not results_path(folder).exists():
        return head + "\n\nNot measured yet."
    run = load_results(folder)
    summary = summary_of(folder)  # memoised: the method page's duet checks read these runs too
    rated = ranked_rows(summary.rows)
    cells = list(dict.fromkeys(r.spec.cell for r in rated))
    parts = [head, run_line(run, summary, ties=False)]
    for cell in cells:  # one ranking per workload and setting: each was measured as its own set
        rows = [r for r in rated if r.spec.cell == cell]
        if len(cells) > 1:
            parts.append(f"### {escape(rows[0].spec.workload)}")
        parts += [verdict_line(summary, rows), _table(rows)]
    return "\n\n".join(parts)


@dataclass(frozen=True)
class Column:
    """One column of a ranking table: its heading, alignment and cell."""

    title: str
    cell: Callable[[Row], str]
    right: bool = False


STACK = Column("Stack", lambda row: code(row.label))
REQ_S = Column("Req/s", lambda row: number_or_dash(row.rps, ",.0f"), right=True)
RATIO = Column("Ratio [95%]", lambda row: ratio_cell(row))
CPU = Column("CPU ms/req", lambda row: number_or_dash(row.cpu_ms_per_req, ".3f"), right=True)
RSS = Column("Peak RSS MiB", lambda row: number_or_dash(row.rss_mb, ".0f"), right=True)
VERDICT = Column("Against the next", lambda row: escape(row.next_verdict or ""))


def ranking_table(rows: Sequence[Row], columns: Sequence[Column]) -> str:
    """Rows best first, numbered, with these columns (docs/rankings.md, docs/catalog.md)."""
    lines = ["| # | " + " | ".join(c.title for c in columns) + " |",
             "|---:|" + "".join("---:|" if c.right else "---|" for c in columns)]
    lines += [f"| {i} | " + " | ".join(c.cell(row) for c in columns) + " |" for i, row in enumerate(rows, start=1)]
    return "\n".join(lines)


def _table(rows: list[Row]) -> str:
    return ranking_table(rows, (STACK, REQ_S, RATIO, CPU, RSS, VERDICT))


def ratio_cell(row: Row) -> str:
    """The ratio with its interval, or why it has none."""
    if row.ratio is None:
        return "-"
    if row.ratio_ci:
        return f"{row.ratio:.2f} [{row.ratio_ci[0]:.2f}, {row.ratio_ci[1]:.2f}]"
    return f"{row.ratio:.2f}" + (f" ({escape(row.interval_note)})" if row.interval_note else "")


def number_or_dash(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def half_widths(rows: Sequence[Row], baseline: str) -> list[float]:
    """Each ratio's interval half-width as a fraction of it (stats.half_width), the baseline's left out."""
    return [h for r in rows if r.label != baseline and (h := half_width(r.ratio_ci, r.ratio)) is not None]


def verdict_line(summary: Summary, rows: list[Row]) -> str:
    """How wide the intervals are and how many adjacent pairs were told apart."""
    halves = half_widths(rows, summary.baseline)
    counts = Counter(r.next_verdict for r in rows if r.next_verdict)
    pairs = sum(counts.values())
    widths = (f"{len(halves)} of {len(rows) - 1} ratios have an interval, half-widths "
              f"±{min(halves):.1%} to ±{max(halves):.1%} (median ±{statistics.median(halves):.1%})"
              if halves else "no ratio has an interval")
    told = counts.get("different", 0) + counts.get("equivalent", 0)
    return (f"{len(rows)} stacks; {widths}. Adjacent pairs: {counts.get('different', 0)} different, "
            f"{counts.get('equivalent', 0)} equivalent, {counts.get('unresolved', 0)} unresolved"
            + (f" ({told / pairs:.0%} told apart or shown equal)." if pairs else "."))
