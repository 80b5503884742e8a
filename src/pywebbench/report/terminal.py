"""The terminal table, in the shape of seed 000's: one table per workload and knob setting."""

from __future__ import annotations

import io
import statistics
from itertools import groupby

from rich.table import Table

from pywebbench.analyze.precision import precision_note
from pywebbench.analyze.rows import Row, Summary, run_aggregation, summarize
from pywebbench.measure.checks import advice, check_name
from pywebbench.plan.knobs import cpus_label, knob_labels
from pywebbench.report.columns import (
    inert,
    plain_console,
    keepalive_label,
    method_note,
    server_label,
    validity_label,
    workers_label,
)
from pywebbench.results.model import ResultSet, TrialSpec


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


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
    for _, group in groupby(summary.rows, key=lambda r: r.spec.cell):
        console.print(_cell_table(list(group), client_keepalive))
    for line in _notes(results, summary):
        console.print(line)
    return inert(buffer.getvalue())


def _cell_table(rows: list[Row], client_keepalive: bool) -> Table:
    """One workload x setting: a row per stack, in the order the summary ranked them."""
    spec = rows[0].spec
    table = Table(
        title=f"{spec.workload} - {spec.connections} connections - {spec.generator} - {spec.duration_s:g}s "
        f"(+{spec.warmup_s:g}s warmup) - stack CPUs {cpus_label(spec.stack_cpus)}, "
        f"generator CPUs {cpus_label(spec.loadgen_cpus)}{_knobs(spec)}",
        title_justify="left",
    )
    open_loop = spec.rate is not None
    paired = any(r.method != "restart" for r in rows)
    ratio_columns = (("Ratio", "right"), ("Ratio 95% CI", "right"), ("Tie", "center"),
                     ("CPU/req ratio", "right")) if paired \
        else (("95% CI", "right"), ("Ratio", "right"))
    for name, justify in (
        ("Framework", "left"), ("Server", "left"), ("Type", "left"), ("Workers", "right"),
        ("Req/s", "right"), *ratio_columns, ("P50 ms", "right"),
        ("P99 ms", "right"), *((("P99 uncorr.", "right"),) if open_loop else ()),
        ("CPU ms/req", "right"), ("RSS MB", "right"), ("Errors", "right"), ("#DB", "right"),
        ("Keep-alive", "center"), ("Valid", "left"),
    ):
        table.add_column(name, justify=justify)
    for row in rows:
        valid = validity_label(row)
        name = row.stack.framework_title + (f" #{row.spec.alias}" if row.spec.alias else "")
        ratio_cells = (_num(row.ratio, ".3f"), _ci(row.ratio_ci, ".3f"), _tie(row, rows),
                       _num(row.cpu_ratio, ".3f")) if paired \
            else (_ci(row.rps_ci, ",.0f"), _num(row.ratio, ".2f"))
        table.add_row(
            name, server_label(row.stack), row.stack.concurrency, workers_label(row.stack),
            _num(row.rps, ",.0f"), *ratio_cells, _num(row.p50_ms, ".1f"),
            _num(row.p99_ms, ".1f"), *((_num(row.uncorrected_p99_ms, ".1f"),) if open_loop else ()),
            _num(row.cpu_ms_per_req, ".3f"), _num(row.rss_mb, ",.0f"), str(row.errors),
            "-" if row.db_sessions is None else str(row.db_sessions),
            _keepalive(row, client_keepalive), valid + (f" !{len(row.checks)}" if row.checks else ""),
        )
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
    paired_rows = [r for r in summary.rows if r.method != "restart"]
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


def _tie(row: Row, rows: list[Row]) -> str:
    if row.tie_group is None:
        return "-"
    shared = sum(1 for r in rows if r.tie_group == row.tie_group) > 1
    return f"={row.tie_group}" if shared else str(row.tie_group)


def _ci(ci: tuple[float, float] | None, fmt: str) -> str:
    return "-" if ci is None else f"{format(ci[0], fmt)}-{format(ci[1], fmt)}"


def _keepalive(row: Row, client: bool) -> str:
    if not client:
        return "off (client)"  # the generator closes every connection, whatever the server offers
    return keepalive_label(row)


def _knobs(spec: TrialSpec) -> str:
    parts = []
    if spec.topology != "direct":
        parts.append(f"via {spec.topology}")
    if spec.db_delay_s is not None:
        parts.append(f"query delay {spec.db_delay_s * 1000:g} ms")
    if spec.max_db_sessions is not None:
        parts.append(f"max DB sessions {spec.max_db_sessions}")
    if spec.db_pool:
        parts.append(f"app pool {spec.db_pool}")
    if spec.upstream_delay_s is not None:
        parts.append(f"upstream delay {spec.upstream_delay_s * 1000:g} ms")
    return "".join(f" - {p}" for p in parts)
