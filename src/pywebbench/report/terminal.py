"""The terminal table, in the shape of seed 000's: one table per workload and knob setting."""

from __future__ import annotations

import io
from itertools import groupby

from rich.console import Console
from rich.table import Table

from pywebbench.analyze import Row, summarize
from pywebbench.results.model import ResultSet, TrialSpec


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _server(row: Row) -> str:
    s = row.stack
    detail = s.worker_class if s.server == "gunicorn" else (s.variant or "")
    return f"{s.server_title} ({detail})" if detail and detail not in (s.server, "prefork") else s.server_title


def render_terminal(results: ResultSet, width: int = 140) -> str:
    summary = summarize(results)
    header = results.header
    m = header.machine
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=False, color_system=None)
    state = "complete" if results.complete else "incomplete (interrupted or still running)"
    console.print(f"run {header.run_id} - {state} - {len(results.trials)} trials")
    console.print(
        f"machine: {m.cpu_model}, {m.cpu_count} CPUs, {m.memory_mb} MiB, {m.os}, kernel {m.kernel}, "
        f"load {m.load_average[0]:.2f} at start"
    )
    for _, group in groupby(summary.rows, key=lambda r: r.spec.cell):
        rows = list(group)
        spec = rows[0].spec
        workload, conns = spec.workload, spec.connections
        table = Table(
            title=f"{workload} - {conns} connections - {spec.generator} - {spec.duration_s:g}s "
            f"(+{spec.warmup_s:g}s warmup) - stack CPUs {_cpus(spec.stack_cpus)}, "
            f"generator CPUs {_cpus(spec.loadgen_cpus)}{_knobs(spec)}",
            title_justify="left",
        )
        for name, justify in (
            ("Framework", "left"), ("Server", "left"), ("Type", "left"), ("Workers", "right"),
            ("Req/s", "right"), ("Ratio", "right"), ("P50 ms", "right"), ("P90 ms", "right"),
            ("P99 ms", "right"), ("Errors", "right"), ("#DB", "right"), ("Keep-alive", "center"),
            ("Valid", "left"),
        ):
            table.add_column(name, justify=justify)  # type: ignore[arg-type]
        for row in rows:
            workers = f"{row.stack.workers}x{row.stack.threads}" if row.stack.threads > 1 else str(row.stack.workers)
            valid = "yes" if row.valid else ("NO: errors" if row.status == "ok" else f"NO: {row.status}")
            table.add_row(
                row.stack.framework_title, _server(row), row.stack.concurrency, workers,
                _num(row.rps, ",.0f"), _num(row.ratio, ".2f"), _num(row.p50_ms, ".1f"),
                _num(row.p90_ms, ".1f"), _num(row.p99_ms, ".1f"), str(row.errors),
                "-" if row.db_sessions is None else str(row.db_sessions),
                {True: "on", False: "off", None: "?"}[row.keepalive], valid + (" (!)" if row.checks else ""),
            )
        console.print(table)
    if summary.baseline_missing:
        console.print(
            f"No ratio for {', '.join(summary.baseline_missing)}: the baseline {summary.baseline} "
            "was not measured in this run (add --stack flask:gunicorn-sync)."
        )
    else:
        console.print(f"Ratio: req/s relative to {summary.baseline} measured in the same run.")
    for row in summary.rows:
        if row.note:
            console.print(f"  {row.stack.id} {row.spec.workload}: {row.note}")
        for check in row.checks:
            console.print(f"  (!) {row.stack.id} {row.spec.workload}: {check}")
    return buffer.getvalue()


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


def _cpus(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus) or "all"
