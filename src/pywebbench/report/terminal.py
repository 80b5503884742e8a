"""The terminal table, in the shape of seed 000's: one table per workload and knob setting, fitted
to the terminal (report/terminal_table.py), then the notes and one line per kind of check a row
failed (report/check_summary.py)."""

from __future__ import annotations

import io
import statistics

from pywebbench.analyze.precision import precision_note
from pywebbench.analyze.rows import Summary, run_aggregation, summarize
from pywebbench.measure.checks import advice
from pywebbench.report.check_summary import check_lines, kinds
from pywebbench.report.columns import Format, TableInfo, shown
from pywebbench.report.common import (cell_title, cells, inert, method_note, placement_lines, plain_console,
                                      run_workloads)
from pywebbench.report.deploy import app_notes, deploy_commands, render_deploy
from pywebbench.report.terminal_table import cell_table, fit
from pywebbench.results.model import ResultSet

WIDTH = 175
"""The width where none is known (a file, a pipe): the seeds' tables, every column shown, fit it."""


def render_terminal(results: ResultSet, width: int = WIDTH, wide: bool = False) -> str:
    """The run's tables fitted to `width` (wide: every column, as wide as they need), then its notes."""
    summary = summarize(results)
    header = results.header
    m = header.machine
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    state = "complete" if results.complete else "incomplete (interrupted or still running)"
    client_keepalive = bool(header.options.get("keepalive", True))
    console.print(f"run {header.run_id} - {state} - {len(results.trials)} trials")
    console.print(
        f"machine: {m.cpu_model}, {m.cpu_count} CPUs, {m.memory_mb} MiB, {m.os}, kernel {m.kernel}, "
        f"load {m.load_average[0]:.2f} at start"
    )
    left_out: dict[str, None] = {}
    for rows in cells(summary.rows, run_workloads(results)):
        info = TableInfo(rows, client_keepalive)
        fitted = fit(info, width, wide)
        # A table wider than the terminal (--wide, or too narrow for even the stack and the
        # ratio) prints whole, its lines longer: never a cell cut.
        console.print(cell_title(rows[0].spec))
        plain_console(buffer, max(width, fitted.width)).print(cell_table(fitted))
        left_out.update((c.header_in(Format.TERMINAL), None) for c in shown(Format.TERMINAL, info)
                        if c not in fitted.columns)
    if left_out:
        console.print(f"More columns: {', '.join(left_out)} (--wide; every figure is in --format csv and html).")
    for line in _notes(results, summary):
        console.print(line)
    deploy = deploy_commands(results)
    if deploy:  # the `app` command's answer
        console.print(render_deploy(dict(deploy), app_notes(results)), soft_wrap=True)  # commands stay whole
    return inert(buffer.getvalue())


def _notes(results: ResultSet, summary: Summary) -> list[str]:
    """What the tables' figures mean, how they were made, and every check with its advice."""
    lines = []
    if summary.baseline_missing:
        lines.append(f"No ratio for {', '.join(summary.baseline_missing)}: the baseline {summary.baseline} "
                     "was not measured in this run (add --stack flask:gunicorn-sync).")
    else:
        lines.append(f"Ratio: req/s relative to {summary.baseline} measured in the same run.")
    rounds = max((t.spec.round for t in results.trials), default=1)
    paired_rows = [r for r in summary.rows if r.method.paired]
    if paired_rows:
        lines.append(method_note(paired_rows))
    else:
        lines.append(f"Req/s: the {run_aggregation(results).value} of {rounds} round(s); 95% CI by bootstrap over "
                     "rounds (restart method: a server start per trial).")
    sources = sorted({r.cpu_source for r in summary.rows if r.cpu_source})
    lines.append("CPU ms/req: the app server's CPU per request; RSS: its peak memory"
                 + (f" (from {', '.join(sources)})." if sources else "."))
    costs = [t.sampler_cpu_s / t.load.duration_s * 100 for t in results.trials
             if t.sampler_cpu_s is not None and t.load is not None and t.load.duration_s > 0]
    if costs:
        lines.append(f"Resource sampling cost: median {statistics.median(costs):.2f}% of one core per window "
                     f"(max {max(costs):.2f}%), measured on each trial.")
    lines.extend(placement_lines(results))
    note = precision_note(results, summary)
    if note:
        lines.append(note)
    for row in summary.rows:
        if row.note:
            lines.append(f"  {row.label} {row.spec.workload}: {row.note}")
        lines.extend(f"  (!) {row.label} {row.spec.workload}: {line.text}" for line in check_lines(row))
    lines.extend(f"  {name}: {advice(name)}" for name in sorted(kinds(summary.rows)))
    return lines
