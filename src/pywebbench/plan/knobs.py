"""Knobs in words and in short: the one place a knob's value is turned into text.

`knob_labels` says what sets a cell apart ("query delay 20 ms", "via nginx") for table titles
and notes; `knob_short` is the compact `name=value` of ranking views; `knob_args` writes a
grid back as the `--knob` texts the sweep grammar reads.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pywebbench.plan.limits import format_bytes
from pywebbench.results.model import TrialSpec
from pywebbench.results.server import AUTO_WORKERS


def cpus_label(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus) or "all"


def knob_labels(spec: TrialSpec, omit: Iterable[str] = ()) -> list[str]:
    """The knobs that set this cell apart, in words; `omit` names TrialSpec fields to leave out
    (a sweep's own axis)."""
    skip = set(omit)
    parts: list[tuple[str, str | None]] = [
        ("rate", None if spec.rate is None else f"open loop at {spec.rate:,.0f} req/s"),
        ("connections", f"{spec.connections} connections"),
        ("workers", None if spec.workers is None else
         "workers chosen by the server" if spec.workers == AUTO_WORKERS else f"{spec.workers} workers"),
        ("threads", None if spec.threads is None else f"{spec.threads} threads"),
        ("topology", None if spec.topology == "direct" else f"via {spec.topology}"),
        ("db_delay_s", None if spec.db_delay_s is None else f"query delay {spec.db_delay_s * 1000:g} ms"),
        ("max_db_sessions", None if spec.max_db_sessions is None else f"max DB sessions {spec.max_db_sessions}"),
        ("db_pool", f"app pool {spec.db_pool}" if spec.db_pool else None),
        ("upstream_delay_s",
         None if spec.upstream_delay_s is None else f"upstream delay {spec.upstream_delay_s * 1000:g} ms"),
        ("cpu_size", None if spec.cpu_size is None else f"sieve of {spec.cpu_size:,}"),
        ("stack_cpus", f"stack CPUs {cpus_label(spec.stack_cpus)}"),
        ("rtt_s", None if spec.rtt_s is None else f"RTT +{spec.rtt_s * 1000:g} ms per link"),
        ("cpu_quota", None if spec.cpu_quota is None else f"CPU quota {spec.cpu_quota:g}"),
        ("memory_limit", None if spec.memory_limit is None else f"memory limit {format_bytes(spec.memory_limit)}"),
        ("python", None if spec.python is None else f"Python {spec.python}"),
        ("pin", None if spec.pin is None else f"pin {spec.pin}"),
        ("protocol", None if spec.protocol is None else f"over {spec.protocol}"),
    ]
    return [text for name, text in parts if text is not None and name not in skip]


def knob_short(name: str, value: object) -> str:
    """`db_delay=20ms` for a TrialSpec field and its value (seconds become milliseconds)."""
    if name == "workers" and value == AUTO_WORKERS:
        return "workers=auto"
    if name == "memory_limit" and isinstance(value, int):
        return f"{name}={format_bytes(value)}"
    if name.endswith("_s") and isinstance(value, float):
        return f"{name[:-2]}={value * 1000:g}ms"
    if isinstance(value, float):
        return f"{name}={value:g}"
    return f"{name}={value}"


def knob_args(grid: Sequence[tuple[str, Sequence[object]]]) -> tuple[str, ...]:
    """A grid as --knob texts, so a resumed preset run rebuilds the same points."""
    return tuple(f"{name}=" + ",".join(_arg(name, v) for v in values) for name, values in grid)


def _arg(name: str, value: object) -> str:
    if name == "workers" and value == AUTO_WORKERS:
        return "auto"
    return f"{value:g}" if isinstance(value, float) else str(value)
