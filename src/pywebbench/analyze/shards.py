"""Chaining the shards of a `--shards N` run: one ratio per stack, the hosts as a random effect.

Each shard measures its stacks' ratios to the baseline in its own rounds (paired.ratio_interval,
on its own hosts). A ratio read on one shard's hosts differs from the same stack's on another's
by a host term (how these hosts treat this stack, beyond the baseline) that no shard sees alone.
The overlap stacks, measured by every shard, show it: V, the pooled between-shard variance of
their log ratios on sum(shards - 1) degrees of freedom, holds the host term and the overlap's
own noise; the host term's variance is V less that noise (at least 0). A stack measured by one
shard keeps its own interval widened by it (paired.with_run_term, the duet's run term's rule:
Satterthwaite's degrees of freedom). An overlap stack's ratio is the mean of its shards', with
V / shards on V's degrees of freedom. Simulated (tests/unit/test_shards_merge.py: 2, 3 and 5
shards, host terms of 0-3x the own noise, a block stack as noisy as the overlap or 2.5x it),
both cover 93-97%. Two shards and two overlap stacks give the host term two degrees of freedom:
honest, and wide where the hosts disagree; more shards narrow it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

# scipy.special, not scipy.stats: the CLI imports this module, and scipy.stats alone costs
# about a second of every command's start
from scipy.special import chdtrc

from pywebbench.analyze.moderation import satterthwaite_df, t_quantile
from pywebbench.analyze.neighbours import PairVerdict
from pywebbench.analyze.paired import CONFIDENCE, Interval, with_run_term
from pywebbench.analyze.rows import summarize
from pywebbench.plan.knob_values import knob_words
from pywebbench.plan.shards import Shard, ShardPlan
from pywebbench.results.model import Cell, ResultSet

SCHEMA_VERSION = 1
"""Of shards.json, a sharded run's chained result."""


@dataclass(frozen=True)
class HostTerm:
    """What the overlap stacks show of the shards' hosts, in one cell."""

    variance: float | None
    """V: the pooled between-shard variance of the overlap's log ratios (None: fewer than two
    shards gave an overlap stack an interval)."""
    df: float
    own_variance: float
    """The overlap's mean own se^2 (what V holds besides the host term)."""
    heterogeneity_p: float | None
    """Cochran's Q against chi-squared on df: small when the shards disagree beyond their own noise."""
    clipped: bool = False
    """V came out below the overlap's own noise, so the host term (their difference) is taken as 0:
    the shards spread less than their own intervals say, by chance or because those are wide. The
    merged intervals then carry V's df but no host term; the result and the report say so."""

    @property
    def host_sd(self) -> float | None:
        """The host term's sd of log ratio (V less the own noise, at least 0: see `clipped`)."""
        return None if self.variance is None else math.sqrt(max(0.0, self.variance - self.own_variance))


@dataclass(frozen=True)
class OverlapReading:
    stack: str
    by_shard: tuple[tuple[int, Interval | None], ...]


@dataclass(frozen=True)
class ShardedRow:
    stack: str
    shards: tuple[int, ...]
    interval: Interval | None
    """The ratio to the baseline across shards, the host term in it; None with a reason in note."""
    own: Interval | None
    """A single shard's own interval (before the host term); None for an overlap stack."""
    note: str | None = None
    next_verdict: PairVerdict | None = None
    """Against the next row down (their merged intervals, taken as independent: conservative for
    two stacks of one shard, whose shared baseline windows would narrow their ratio)."""


def host_term(overlap: Mapping[str, Sequence[Interval]]) -> HostTerm:
    """V from the overlap stacks' per-shard intervals (each stack's list: one per shard)."""
    squares, df, own, q = 0.0, 0, [], 0.0
    for intervals in overlap.values():
        if len(intervals) < 2:
            continue
        logs = [math.log(i.center) for i in intervals]
        mean = sum(logs) / len(logs)
        squares += sum((y - mean) ** 2 for y in logs)
        df += len(logs) - 1
        own += [i.se_log ** 2 for i in intervals]
        weights = [1.0 / i.se_log ** 2 for i in intervals if i.se_log > 0]
        if len(weights) == len(intervals):
            pooled = sum(w * y for w, y in zip(weights, logs)) / sum(weights)
            q += sum(w * (y - pooled) ** 2 for w, y in zip(weights, logs))
    if df == 0:
        return HostTerm(None, 0.0, 0.0, None)
    variance, own_variance = squares / df, sum(own) / len(own)
    return HostTerm(variance, float(df), own_variance, float(chdtrc(df, q)), clipped=variance < own_variance)


def across_shards(own: Interval, term: HostTerm) -> Interval | None:
    """One shard's ratio interval carrying the host term (module docstring)."""
    sd = term.host_sd
    return None if sd is None else with_run_term(own, sd, term.df)


def overlap_mean(intervals: Sequence[Interval], term: HostTerm, confidence: float = CONFIDENCE) -> Interval | None:
    """An overlap stack's ratio: the mean of its shards' log ratios, V / shards."""
    if term.variance is None or not intervals:
        return None
    centre = sum(math.log(i.center) for i in intervals) / len(intervals)
    return _interval(centre, term.variance / len(intervals), term.df, sum(i.n_rounds for i in intervals),
                     sum(i.n_launches for i in intervals), confidence)


def _interval(centre: float, variance: float, df: float, rounds: int, launches: int, confidence: float) -> Interval:
    se = math.sqrt(variance)
    half = t_quantile(df, confidence) * se
    return Interval(center=math.exp(centre), low=math.exp(centre - half), high=math.exp(centre + half),
                    n_rounds=rounds, n_launches=launches, se_log=se, df=df, confidence=confidence)


def independent_verdict(a: Interval, b: Interval, margin: float, confidence: float = CONFIDENCE) -> PairVerdict:
    """a over b from two independent intervals: different, equivalent within ±margin (two one-sided
    tests), or unresolved."""
    diff = math.log(a.center) - math.log(b.center)
    variance = a.se_log ** 2 + b.se_log ** 2
    df = satterthwaite_df((a.se_log ** 2, a.df), (b.se_log ** 2, b.df))
    rounds, launches = a.n_rounds + b.n_rounds, a.n_launches + b.n_launches
    if _interval(diff, variance, df, rounds, launches, confidence).excludes_one:
        return PairVerdict.DIFFERENT
    if _interval(diff, variance, df, rounds, launches, 2.0 * confidence - 1.0).within(margin):
        return PairVerdict.EQUIVALENT
    return PairVerdict.UNRESOLVED


def merge_cell(readings: Mapping[int, Mapping[str, Interval | None]], baseline: str, overlap: Sequence[str],
               margin: float) -> tuple[HostTerm, tuple[OverlapReading, ...], tuple[ShardedRow, ...]]:
    """One cell's shards (shard -> stack -> ratio interval) chained: the host term, the overlap's
    agreement, and every stack's row, best first, each with its verdict against the next."""
    shards = sorted(readings)
    agreement = tuple(OverlapReading(s, tuple((n, readings[n].get(s)) for n in shards)) for s in overlap)
    term = host_term({r.stack: [i for _, i in r.by_shard if i is not None] for r in agreement})
    rows: list[ShardedRow] = [ShardedRow(baseline, tuple(shards), None, None, "the baseline: 1 by definition")]
    for reading in agreement:
        got = [i for _, i in reading.by_shard if i is not None]
        merged = overlap_mean(got, term)
        rows.append(ShardedRow(reading.stack, tuple(n for n, i in reading.by_shard if i is not None), merged, None,
                               None if merged else _why_none(got)))
    for number in shards:
        for stack, own in readings[number].items():
            if stack == baseline or stack in overlap:
                continue
            merged = across_shards(own, term) if own is not None else None
            rows.append(ShardedRow(stack, (number,), merged, own, None if merged else _why_none([own] if own else [])))
    return term, agreement, _with_verdicts(rows, baseline, margin)


def _why_none(own: Sequence[Interval]) -> str:
    if not own:
        return "its shard gave it no interval"
    return "no overlap stack has intervals from two shards: the host term, and so an interval across shards, is unknown"


def _with_verdicts(rows: list[ShardedRow], baseline: str, margin: float) -> tuple[ShardedRow, ...]:
    def centre(row: ShardedRow) -> float:
        return 1.0 if row.stack == baseline else (row.interval.center if row.interval else -1.0)

    ranked = sorted(rows, key=lambda r: (-centre(r), r.stack))
    out: list[ShardedRow] = []
    for row, below in zip(ranked, [*ranked[1:], None]):
        verdict = None
        if below is not None:
            a, b = _as_interval(row, baseline), _as_interval(below, baseline)
            verdict = independent_verdict(a, b, margin) if a is not None and b is not None else None
        out.append(ShardedRow(row.stack, row.shards, row.interval, row.own, row.note, verdict))
    return tuple(out)


def _as_interval(row: ShardedRow, baseline: str) -> Interval | None:
    """The baseline as an exact 1 (its ratio is the reference, with no noise of its own)."""
    if row.stack == baseline:
        return Interval(1.0, 1.0, 1.0, 0, 0, 0.0)
    return row.interval


@dataclass(frozen=True)
class ShardedCell:
    cell: str
    host: HostTerm
    agreement: tuple[OverlapReading, ...]
    rows: tuple[ShardedRow, ...]
    baseline_rps: tuple[tuple[int, float | None], ...]
    """Each shard's baseline req/s: how far its hosts differ in speed (the ratios cancel it)."""


@dataclass(frozen=True)
class ShardedRun:
    schema_version: int
    plan: ShardPlan
    equivalence: float
    cells: tuple[ShardedCell, ...]


def plan_of(results: Mapping[int, ResultSet], baseline: str) -> ShardPlan:
    """The shards' plan read back from what each measured: the overlap is what every shard has
    (each part in name order: the windows' order is random)."""
    stacks = {n: {t.spec.label for t in r.trials} - {baseline} for n, r in sorted(results.items())}
    overlap = tuple(sorted(set.intersection(*stacks.values()))) if stacks else ()
    shards = []
    for number, measured in stacks.items():
        own = tuple(sorted(measured - set(overlap)))
        shards.append(Shard(number, (baseline, *overlap, *own), own))
    return ShardPlan(baseline, overlap, tuple(shards))


def chain(results: Mapping[int, ResultSet], baseline: str, equivalence: float) -> ShardedRun:
    """Each shard's summary read, and every cell's shards chained."""
    plan = plan_of(results, baseline)
    readings: dict[str, dict[int, dict[str, Interval | None]]] = defaultdict(dict)
    speeds: dict[str, dict[int, float | None]] = defaultdict(dict)
    for number, measured in sorted(results.items()):
        for row in summarize(measured, baseline).rows:
            cell = _cell_text(row.spec.cell)
            readings[cell].setdefault(number, {})[row.label] = row.ratio_interval
            if row.label == baseline:
                speeds[cell][number] = row.rps
    cells = []
    for cell, by_shard in readings.items():
        term, agreement, rows = merge_cell(by_shard, baseline, plan.overlap, equivalence)
        cells.append(ShardedCell(cell, term, agreement, rows, tuple(sorted(speeds[cell].items()))))
    return ShardedRun(SCHEMA_VERSION, plan, equivalence, tuple(cells))


def _cell_text(cell: Cell) -> str:
    """A sharded run has no knobs (check_shards): its cells differ by workload alone."""
    return f"{cell.workload} ({knob_words(cell, 'connections')})"
