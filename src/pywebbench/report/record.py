"""The flat record of a row (one per stack x workload x knobs): the CSV's columns and the JSON's
rows, raw numbers rounded to what was measured, no formatting."""

from __future__ import annotations

from typing import Any

from pywebbench.analyze.rows import Row

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
