"""The terminal table, in the shape of seed 000's: one table per workload and knob setting."""

from __future__ import annotations

import io
import statistics

from rich.table import Table

from pywebbench.analyze.precision import precision_note
from pywebbench.analyze.rows import Summary, run_aggregation, summarize
from pywebbench.measure.checks import advice, check_name
from pywebbench.report.columns import Format, TableInfo, row_cells, shown
from pywebbench.report.common import (cell_title, cells, inert, method_note, placement_lines, plain_console,
                                      run_workloads)
from pywebbench.report.deploy import app_notes, deploy_commands, render_deploy
from pywebbench.results.model import ResultSet


def render_terminal(results: ResultSet, width: int = 175) -> str:
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
    for rows in cells(summary.rows, run_workloads(results)):
        console.print(_cell_table(TableInfo(rows, client_keepalive)))
    for line in _notes(results, summary):
        console.print(line)
    deploy = deploy_commands(results)
    if deploy:  # the `app` command's answer
        console.print(render_deploy(dict(deploy), app_notes(results)), soft_wrap=True)  # commands stay whole
    return inert(buffer.getvalue())


def _cell_table(info: TableInfo) -> Table:
    """One workload x setting: a row per stack, in the order the summary ranked them."""
    table = Table(title=cell_title(info.rows[0].spec), title_justify="left")
    columns = shown(Format.TERMINAL, info)
    for column in columns:
        table.add_column(column.header_in(Format.TERMINAL), justify=column.align.value)
    for row in info.rows:
        table.add_row(*(cell.text for cell in row_cells(Format.TERMINAL, info, columns, row)))
    return table


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
    advised: set[str] = set()
    for row in summary.rows:
        if row.note:
            lines.append(f"  {row.label} {row.spec.workload}: {row.note}")
        for check in row.checks:
            lines.append(f"  (!) {row.label} {row.spec.workload}: {check}")
            advised.add(check_name(check))
    lines.extend(f"  {name}: {advice(name)}" for name in sorted(advised))
    return lines
