"""The terminal table of `compare`: what changed per stack x workload, and whether it is noise."""

from __future__ import annotations

import io

from rich.table import Table

from pywebbench.analyze.compare import Comparison
from pywebbench.report.common import inert, plain_console
from pywebbench.report.markdown import escape


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:+.1%}"


def _pair(before: float | None, after: float | None, fmt: str) -> str:
    def one(v: float | None) -> str:
        return "-" if v is None else format(v, fmt)
    return f"{one(before)} -> {one(after)}"


def render_comparison(comparison: Comparison, width: int = 150) -> str:
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    table = Table(title=f"{comparison.before} -> {comparison.after}", title_justify="left")
    for name in ("Stack", "Workload", "Knobs", "Req/s", "Change", "95% CI of ratio", "P50 ms", "P99 ms",
                 "CPU ms/req", "Verdict"):
        table.add_column(name)
    for c in comparison.changes:
        ci = "-" if c.ratio_ci is None else f"[{c.ratio_ci[0]:.3f}, {c.ratio_ci[1]:.3f}]"
        table.add_row(c.stack, c.workload, c.knobs, _pair(c.rps_before, c.rps_after, ",.0f"), _pct(c.rps_change),
                      ci, _pair(c.p50_before, c.p50_after, ".1f"), _pair(c.p99_before, c.p99_after, ".1f"),
                      _pair(c.cpu_before, c.cpu_after, ".3f"), c.verdict)
    console.print(table)
    noise = sum(c.verdict == "within noise" for c in comparison.changes)
    console.print(f"{len(comparison.significant)} significant, {noise} within noise, "
                  f"{len(comparison.changes) - noise - len(comparison.significant)} without an interval "
                  "(one repeat: use --repeats 3 or more)")
    for label, names in (("only before", comparison.only_before), ("only after", comparison.only_after)):
        if names:
            console.print(f"{label}: {', '.join(names)}")
    return inert(buffer.getvalue())


def render_comparison_markdown(comparison: Comparison) -> str:
    """The same comparison as a Markdown table (a pull-request comment)."""
    lines = [f"**pywebbench compare** `{escape(comparison.before)}` -> `{escape(comparison.after)}`", "",
             "| Stack | Workload | Knobs | Req/s | Change | 95% CI of ratio | P99 ms | CPU ms/req | Verdict |",
             "|---|---|---|---|---|---|---|---|---|"]
    for c in comparison.changes:
        ci = "-" if c.ratio_ci is None else f"[{c.ratio_ci[0]:.3f}, {c.ratio_ci[1]:.3f}]"
        lines.append(f"| {escape(c.stack)} | {escape(c.workload)} | {escape(c.knobs)} | "
                     f"{_pair(c.rps_before, c.rps_after, ',.0f')} | {_pct(c.rps_change)} | {ci} | "
                     f"{_pair(c.p99_before, c.p99_after, '.1f')} | {_pair(c.cpu_before, c.cpu_after, '.3f')} | "
                     f"{c.verdict} |")
    return "\n".join(lines) + "\n"
