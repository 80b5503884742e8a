"""A sharded run's chained result as Markdown (`shards.md`; the terminal prints the same)."""

from __future__ import annotations

from pywebbench.analyze.paired import Interval
from pywebbench.analyze.shards import ShardedCell, ShardedRun


def _ratio(interval: Interval | None) -> str:
    return "—" if interval is None else f"{interval.center:.3f} [{interval.low:.3f}, {interval.high:.3f}]"


def _df(interval: Interval | None) -> str:
    return "—" if interval is None else f"{interval.df:.1f}"


def render_sharded(run: ShardedRun, level: int = 1) -> str:
    """`level`: the heading depth of its title (its cells one deeper), so a page can hold it."""
    plan = run.plan
    lines = [f"{'#' * level} Sharded run: {len(plan.shards)} shards", "",
             f"Ratios are to `{plan.baseline}`, measured by every shard in its own rounds with the overlap stacks "
             f"{', '.join(f'`{s}`' for s in plan.overlap)}; each shard's own block is below. A 95% interval "
             "carries the host term the overlap stacks show (analyze/shards.py): each shard past the first gives it "
             "one degree of freedom per overlap stack, so two shards make wide intervals (Student's t on 2 df is "
             "4.3) and more shards narrow them.", ""]
    for shard in plan.shards:
        lines.append(f"- shard {shard.number}: {', '.join(f'`{s}`' for s in shard.own)}")
    for cell in run.cells:
        lines += ["", *_cell(cell, run, level + 1)]
    return "\n".join(lines) + "\n"


def _cell(cell: ShardedCell, run: ShardedRun, level: int) -> list[str]:
    lines = [f"{'#' * level} {cell.cell}", "", *_agreement(cell), "",
             f"| stack | shard | ratio [95%] across shards | df | its shard's own interval | next below (±{run.equivalence:.0%}) |",
             "|---|---|---|---|---|---|"]
    for row in cell.rows:
        shards = ",".join(str(n) for n in row.shards)
        ratio = "1 (baseline)" if row.stack == run.plan.baseline else (_ratio(row.interval) if row.interval
                                                                        else f"— ({row.note})")
        verdict = row.next_verdict.value if row.next_verdict else ""
        lines.append(f"| `{row.stack}` | {shards} | {ratio} | {_df(row.interval)} | {_ratio(row.own)} | {verdict} |")
    return lines


def _agreement(cell: ShardedCell) -> list[str]:
    """The overlap stacks shard by shard, and what they say of the hosts."""
    shards = [n for n, _ in cell.baseline_rps]
    head = "| overlap stack | " + " | ".join(f"shard {n}" for n in shards) + " |"
    lines = ["The hosts' agreement on the overlap stacks (each shard's ratio to the baseline, its own 95%):", "",
             head, "|---|" + "---|" * len(shards)]
    for reading in cell.agreement:
        got = dict(reading.by_shard)
        lines.append(f"| `{reading.stack}` | " + " | ".join(_ratio(got.get(n)) for n in shards) + " |")
    speeds = dict(cell.baseline_rps)
    lines.append("| baseline req/s | " + " | ".join(f"{speeds[n]:,.0f}" if speeds.get(n) else "—" for n in shards) + " |")
    term = cell.host
    if term.variance is None:
        lines += ["", "No overlap stack has intervals from two shards: the host term is unknown, so no ratio "
                  "has an interval across shards."]
        return lines
    sd = term.host_sd or 0.0
    agree = ("the shards agree within their own noise" if (term.heterogeneity_p or 0.0) >= 0.05
             else "the shards disagree beyond their own noise")
    host = (f"a host term of about {sd:.2%}" if not term.clipped else
            "a host term clipped at 0 (the spread is below the own noise, so none is added; the merged "
            "intervals keep that spread's df)")
    lines += ["", f"Between shards the overlap's log ratios spread by {term.variance ** 0.5:.2%} (sd, on "
              f"{term.df:.0f} df), their own noise {term.own_variance ** 0.5:.2%}: {host}; "
              f"{agree} (Cochran's Q, p = {term.heterogeneity_p:.2f})."]
    return lines
