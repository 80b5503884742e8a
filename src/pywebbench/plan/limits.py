"""The app server's resources as a deployment states them: a CPU quota, a memory limit in bytes
(`256M`, `1G`), and `auto` workers; how each is written, read and refused.

Sizes are binary (K, M, G, T are powers of 1024, with or without `i`), as the kernel's
memory.limit_in_bytes, Docker and systemd read them; Kubernetes spells the same `256Mi`.
"""

from __future__ import annotations

import re
from decimal import ROUND_HALF_UP, Decimal

MIN_CPU_QUOTA = 0.01
"""The smallest quota: 1 ms of CPU per 100 ms period, the kernel's floor for cfs_quota_us."""
MIN_MEMORY_LIMIT = 32 * 1024 * 1024
"""The smallest memory limit: no server of the catalog starts below it (a bare Python with the
app imported is about 20 MiB), so a lower one would measure nothing but the failure to start."""
AUTO = "auto"
"""The word for AUTO_WORKERS in a knob's values and in --workers."""

_BINARY = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4}
_BYTES = re.compile(r"(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?:(?P<unit>[kmgtKMGT])i?B?)?")


def format_bytes(value: int) -> str:
    """`256M`, `1G`, `1536M`: the largest unit that writes it whole (parse_bytes reads it back)."""
    for unit in "TGMK":
        scale = 1024 ** _BINARY[unit.lower()]
        if value and value % scale == 0:
            return f"{value // scale}{unit}"
    return str(value)


def parse_bytes(text: str) -> int:
    """`256M`, `1G`, `512Mi`, `1.5G`, `1048576` -> bytes (ValueError if not a size)."""
    match = _BYTES.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"{text.strip()!r} is not a size; use a form like 256M, 1G or 512Mi")
    scale = 1024 ** _BINARY[(match["unit"] or "").lower()]
    return int((Decimal(match["number"]) * scale).to_integral_value(rounding=ROUND_HALF_UP))


def cpu_quota_problem(cpus: float) -> str | None:
    """Why a CPU quota cannot be set, or None (its refusal in options and knobs alike)."""
    if cpus <= 0:
        return f"must be positive, got {cpus:g}"
    if cpus < MIN_CPU_QUOTA:
        return (f"must be at least {MIN_CPU_QUOTA:g} CPU (1 ms per 100 ms period, the kernel's least quota), "
                f"got {cpus:g}")
    return None


def memory_limit_problem(size: float) -> str | None:
    """Why a memory limit cannot be set, or None."""
    if size < MIN_MEMORY_LIMIT:
        return (f"must be at least {format_bytes(MIN_MEMORY_LIMIT)}: no server starts below it "
                f"(a bare Python with the app imported is about 20M), got {format_bytes(int(size))}")
    return None
