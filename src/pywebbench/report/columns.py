"""What every tabular format shares: the flat record (one per stack x workload x knobs), the
labels of a row, and the cells a table is split into."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console

from pywebbench.analyze.rows import Row
from pywebbench.plan.knobs import cpus_label, knob_labels
from pywebbench.results.model import ResultSet, StackInfo, TrialSpec

CSV_COLUMNS: tuple[str, ...] = (
    "framework", "server", "worker_class", "type", "workers", "threads", "workload", "connections",
    "rps", "rps_ci_low", "rps_ci_high", "rps_min", "rps_max", "ratio", "ratio_ci_low", "ratio_ci_high",
    "p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms", "errors", "valid", "db_sessions",
    "cpu_ms_per_req", "cpu_percent", "rss_mb",
    "keepalive", "status", "trials", "aggregation", "stack", "interface", "event_loop", "http_parser",
    "topology", "max_db_sessions", "db_delay_ms", "db_pool", "upstream_delay_ms", "cpu_size",
    "rate", "uncorrected_p99_ms", "checks", "note",
    "method", "rounds", "launches", "tie_group", "cpu_ratio", "cpu_ratio_ci_low", "cpu_ratio_ci_high", "mde",
    "cpu_source",
)


# C0/C1 controls (but tab and newline) and the bidi overrides: from a results file they could
# clear the screen, retitle the terminal or reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """Text from a results file made safe to print: every control character shown as \\xNN."""
    return _UNSAFE.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                       else f"\\u{ord(m.group()):04x}", text)


def plain_console(buffer: io.StringIO, width: int) -> Console:
    """A console into `buffer` that prints stored strings as they are: no rich markup (a stored
    "[/x]" would raise, "[link=...]" would make a link), no emoji codes, no colour."""
    return Console(file=buffer, width=width, force_terminal=False, color_system=None, markup=False, emoji=False,
                   highlight=False)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _bound(interval: tuple[float, float] | None, index: int, digits: int) -> float | None:
    return None if interval is None else round(interval[index], digits)


def flat(row: Row) -> dict[str, Any]:
    s = row.stack
    return {
        "framework": s.framework_title,
        "server": s.server_title,
        "worker_class": s.worker_class,
        "type": s.concurrency,
        "workers": s.workers,
        "threads": s.threads,
        "workload": row.spec.workload,
        "connections": row.spec.connections,
        "rps": _round(row.rps, 1),
        "rps_ci_low": _bound(row.rps_ci, 0, 1),
        "rps_ci_high": _bound(row.rps_ci, 1, 1),
        "rps_min": _round(row.rps_min, 1),
        "rps_max": _round(row.rps_max, 1),
        "ratio": _round(row.ratio, 3),
        "ratio_ci_low": _bound(row.ratio_ci, 0, 3),
        "ratio_ci_high": _bound(row.ratio_ci, 1, 3),
        "p50_ms": _round(row.p50_ms, 3),
        "p90_ms": _round(row.p90_ms, 3),
        "p95_ms": _round(row.p95_ms, 3),
        "p99_ms": _round(row.p99_ms, 3),
        "p999_ms": _round(row.p999_ms, 3),
        "errors": row.errors,
        "valid": row.valid,
        "keepalive": row.keepalive,
        "status": row.status,
        "trials": row.trials,
        "aggregation": row.aggregation,
        "stack": row.label,
        "interface": s.interface,
        "event_loop": s.event_loop,
        "http_parser": s.http_parser,
        "db_sessions": row.db_sessions,
        "cpu_ms_per_req": _round(row.cpu_ms_per_req, 4),
        "cpu_percent": _round(row.cpu_percent, 1),
        "rss_mb": _round(row.rss_mb, 1),
        "topology": row.spec.topology,
        "max_db_sessions": row.spec.max_db_sessions,
        "db_delay_ms": _ms(row.spec.db_delay_s),
        "db_pool": row.spec.db_pool,
        "upstream_delay_ms": _ms(row.spec.upstream_delay_s),
        "cpu_size": row.spec.cpu_size,
        "rate": row.spec.rate,
        "uncorrected_p99_ms": _round(row.uncorrected_p99_ms, 3),
        "method": row.method,
        "rounds": row.rounds,
        "launches": row.launches,
        "tie_group": row.tie_group,
        "cpu_ratio": _round(row.cpu_ratio, 4),
        "cpu_ratio_ci_low": _bound(row.cpu_ratio_ci, 0, 4),
        "cpu_ratio_ci_high": _bound(row.cpu_ratio_ci, 1, 4),
        "mde": _round(row.mde, 4),
        "cpu_source": row.cpu_source,
        "checks": "; ".join(row.checks),
        "note": row.note,
    }


# Labels shared by the tables of every format (the terminal table has its own copies).

def server_label(stack: StackInfo) -> str:
    detail = stack.worker_class if stack.server == "gunicorn" else (stack.variant or "")
    if detail and detail not in (stack.server, "prefork"):
        return f"{stack.server_title} ({detail})"
    return stack.server_title


def workers_label(stack: StackInfo) -> str:
    return f"{stack.workers}x{stack.threads}" if stack.threads > 1 else str(stack.workers)


def validity_label(row: Row) -> str:
    if row.valid:
        return "yes"
    return "NO: errors" if row.status == "ok" else f"NO: {row.status}"


def keepalive_label(row: Row) -> str:
    return {True: "on", False: "off", None: "?"}[row.keepalive]




def cell_title(spec: TrialSpec) -> str:
    """'hello - 100 connections - wrk - 5s (+2s warmup) - stack CPUs 1, generator CPUs 0 - ...'."""
    timing = f"{spec.requests:,} requests" if spec.requests else f"{spec.duration_s:g}s (+{spec.warmup_s:g}s warmup)"
    return " - ".join([spec.workload, f"{spec.connections} connections", spec.generator, timing,
                       f"stack CPUs {cpus_label(spec.stack_cpus)}, generator CPUs {cpus_label(spec.loadgen_cpus)}",
                       *knob_labels(spec, omit=("connections", "stack_cpus"))])


def _order_key(value: object) -> tuple[int, float, str]:
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, int | float):
        return (1, float(value), "")
    return (1, 0.0, str(value))


def cells(rows: Iterable[Row], workloads: Sequence[str] = ()) -> list[list[Row]]:
    """Rows split by cell (TrialSpec.cell), in the rows' order within each; cells ordered by
    workload (in the order given, e.g. the run's, then as first seen), then by their knobs
    numerically (so 25 connections comes before 100)."""
    groups: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(row.spec.cell, []).append(row)
    order = list(dict.fromkeys([*workloads, *(str(cell[0]) for cell in groups)]))

    def key(cell: tuple[object, ...]) -> tuple[Any, ...]:
        return (order.index(str(cell[0])), tuple(_order_key(v) for v in cell[1:]))

    return [groups[cell] for cell in sorted(groups, key=key)]


def run_workloads(results: ResultSet) -> list[str]:
    """Workloads in the order the run measured them."""
    return list(dict.fromkeys(t.spec.workload for t in results.trials))


def num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def interval(ci: tuple[float, float] | None, fmt: str) -> str:
    """'[11,900–12,800]', or '' when there is no interval (a single repeat)."""
    return "" if ci is None else f"[{format(ci[0], fmt)}–{format(ci[1], fmt)}]"


def latency_format(ms: float | None) -> str:
    """Enough digits to tell sub-millisecond latencies apart, no false precision above."""
    if ms is None:
        return "-"
    return format(ms, ".2f" if ms < 10 else ".1f" if ms < 1000 else ",.0f")


def method_note(rows: list[Row]) -> str:
    """What the paired method did and how to read its intervals and ties."""
    method = rows[0].method
    rounds = max(r.rounds for r in rows)
    launches = max(r.launches for r in rows)
    spec = rows[0].spec
    text = (f"Method: {method}, {rounds} rounds in {launches} launch(es), {spec.duration_s:g}s windows after "
            f"{spec.settle_s:g}s settles. Ratio: to the baseline within each round (a 10%-trimmed geometric "
            "mean over rounds); its 95% interval treats rounds as nested in launches (rounds resampled within "
            "each launch, plus the variance between launches, Student's t). Rows with the "
            "same Tie number are tied: the interval of their own paired ratio holds 1.")
    if method == "duet":
        text += (" Duet: every pair of stacks was loaded at the same time once a round, on the same CPUs "
                 "with equal CPU shares, and each ratio to the baseline is the least-squares fit to all of "
                 "the round's pairs; it is relative efficiency under a shared CPU and answers CPU-bound "
                 "comparisons, not stacks limited by waiting (a database behind few workers).")
    return text
