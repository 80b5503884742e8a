"""The flat record of a row (one per stack x workload x knobs): the CSV's columns and the JSON's
rows, raw numbers rounded to what was measured, no formatting.

Every sweepable knob (plan/knob_declarations.py) is a column of its own, made from the declared
knobs when a table is written, so rows that differ only in a knob's setting differ in a column: a
knob named as `--knob` names it, durations in ms (`rtt_ms`, `db_delay_ms`), stack_cpus as the
count of CPUs the stack had (the knob's unit).
"""

from __future__ import annotations

from typing import Any

from pywebbench.analyze.rows import Row
from pywebbench.plan.knob_declarations import Kind, Knob, declared_knobs


def knob_column(knob: Knob) -> str:
    """The column a knob's setting is in: its name, `_ms` after a duration's, `_mb` after a size's (MiB)."""
    return knob.column


def knob_columns() -> tuple[str, ...]:
    """Each declared knob's column, in declaration order."""
    return tuple(knob_column(k) for k in declared_knobs())


_COLUMNS: tuple[str, ...] = (
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


def csv_columns() -> tuple[str, ...]:
    """The columns in their order; a knob's column that is not among them yet comes last."""
    return _COLUMNS + tuple(c for c in knob_columns() if c not in _COLUMNS)


PROFILE_COLUMNS: tuple[str, ...] = ("cpu_kernel", "cpu_server", "cpu_framework", "cpu_app", "cpu_rest",
                                    "profile_samples", "profile_overhead", "profile_note")
"""--profile's split (shares of the samples on the CPU), after csv_columns() in a run that has profiles."""


def profile_flat(row: Row) -> dict[str, Any]:
    p = row.profile
    shares = {name: count / p.samples for name, count in p.split} if p is not None and p.samples else {}
    note = (p.unreadable or p.error or "") if p is not None else ""
    return {**{f"cpu_{name}": _round(shares.get(name), 4) for name in ("kernel", "server", "framework", "app", "rest")},
            "profile_samples": p.samples if p is not None else None,
            "profile_overhead": _round(p.overhead, 4) if p is not None else None, "profile_note": note or None}


SHAPE_FIGURES: tuple[tuple[str, str, int], ...] = (
    ("shape_rate", "rate", 1), ("shape_p99_ms", "p99_ms", 3), ("shape_mb_s", "mb_s", 3),
    ("shape_cpu_s_per_mb", "cpu_s_per_mb", 5), ("shape_rss_kb_per_conn", "rss_kb_per_connection", 3),
    ("shape_socket_kb_per_conn", "socket_kb_per_connection", 3))
"""A connection shape's figures (analyze/shape_figures.ShapeRow): column, field, digits; each with
its interval's bounds (Student's t over launch means) and the launches it was made of."""
SHAPE_COLUMNS: tuple[str, ...] = (
    *(f"{name}{part}" for name, _, _ in SHAPE_FIGURES for part in ("", "_ci_low", "_ci_high")),
    "shape_launches", "shape_asked", "shape_held_min", "shape_refused_max", "shape_closed_max")
"""After csv_columns() in a run with a connection-shape workload."""


def shape_flat(row: Row) -> dict[str, Any]:
    shape = row.shape
    out: dict[str, Any] = dict.fromkeys(SHAPE_COLUMNS)
    if shape is None:
        return out
    for name, field, digits in SHAPE_FIGURES:
        found = getattr(shape, field)
        if found is not None:
            out[name] = _round(found.value, digits)
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = (_bound(found.interval, 0, digits),
                                                             _bound(found.interval, 1, digits))
            out["shape_launches"] = out["shape_launches"] or found.launches  # the rate's: every window has one
    out.update(shape_asked=shape.asked, shape_held_min=shape.held, shape_refused_max=shape.refused,
               shape_closed_max=shape.closed)
    return out


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 3)


def _round(value: float | None, digits: int) -> float | None:
    return None if value is None else round(value, digits)


def _bound(interval: tuple[float, float] | None, index: int, digits: int) -> float | None:
    return None if interval is None else round(interval[index], digits)


def knob_setting(row: Row, knob: Knob) -> Any:
    """The knob's setting the row ran with: the stack's own count where it records one (workers,
    threads: its default rule resolved), else the trial's (a field-less knob's from its `knobs`);
    a duration in ms, CPUs as a count."""
    ran = getattr(row.stack, knob.field, None) if knob.field is not None else None
    value = ran if ran is not None else knob.setting(row.spec)
    if isinstance(value, tuple):
        return len(value) or None
    if knob.kind is Kind.BYTES:
        return None if value is None else round(value / 2**20, 3)
    return _ms(value) if knob.kind is Kind.SECONDS else value


def flat(row: Row) -> dict[str, Any]:
    return {**{knob_column(k): knob_setting(row, k) for k in declared_knobs()}, **_described(row)}


def _described(row: Row) -> dict[str, Any]:
    s = row.stack
    return {
        "framework": s.framework_title,
        "server": s.server_title,
        "worker_class": s.worker_class,
        "type": s.concurrency,
        "workload": row.spec.workload,
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
