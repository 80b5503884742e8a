"""The flat record every tabular format shares, one per stack x workload x knobs."""

from __future__ import annotations

from typing import Any

from pywebbench.analyze import Row

CSV_COLUMNS: tuple[str, ...] = (
    "framework", "server", "worker_class", "type", "workers", "threads", "workload", "connections",
    "rps", "ratio", "p50_ms", "p90_ms", "p99_ms", "errors", "valid", "db_sessions",
    "keepalive", "status", "trials", "stack", "interface", "event_loop", "http_parser",
    "topology", "max_db_sessions", "db_delay_ms", "db_pool", "upstream_delay_ms", "cpu_size", "checks", "note",
)


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


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
        "ratio": _round(row.ratio, 3),
        "p50_ms": _round(row.p50_ms, 3),
        "p90_ms": _round(row.p90_ms, 3),
        "p99_ms": _round(row.p99_ms, 3),
        "errors": row.errors,
        "valid": row.valid,
        "keepalive": row.keepalive,
        "status": row.status,
        "trials": row.trials,
        "stack": s.id,
        "interface": s.interface,
        "event_loop": s.event_loop,
        "http_parser": s.http_parser,
        "db_sessions": row.db_sessions,
        "topology": row.spec.topology,
        "max_db_sessions": row.spec.max_db_sessions,
        "db_delay_ms": _ms(row.spec.db_delay_s),
        "db_pool": row.spec.db_pool,
        "upstream_delay_ms": _ms(row.spec.upstream_delay_s),
        "cpu_size": row.spec.cpu_size,
        "checks": "; ".join(row.checks),
        "note": row.note,
    }
