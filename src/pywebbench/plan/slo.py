"""A latency objective: `--slo 'p99<100ms'`, the percentile and the limit the tuner must hold."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pywebbench.core.errors import UserError

_SLO = re.compile(r"^\s*p(\d+(?:\.\d+)?)\s*<\s*(\d+(?:\.\d+)?)\s*(ms|s)\s*$")
_METRIC = re.compile(r"^\s*([A-Za-z_][\w.]*)\s*[<>=]")


@dataclass(frozen=True)
class Slo:
    percentile: float
    """50, 99, 99.9, ..."""
    limit_ms: float

    @property
    def text(self) -> str:
        return f"p{self.percentile:g}<{self.limit_ms:g}ms"

    def met(self, latency_ms: float | None) -> bool:
        """Held by a measured latency at this percentile (no figure: not held)."""
        return latency_ms is not None and latency_ms < self.limit_ms


def parse_slo(text: str) -> Slo:
    match = _SLO.match(text)
    metric = _METRIC.match(text)
    if match is None and metric is not None and re.fullmatch(r"p\d+(?:\.\d+)?", metric.group(1)) is None:
        raise UserError(f"--slo {text!r}: unknown metric {metric.group(1)!r}; the objective is a latency "
                        f"percentile such as p50, p99 or p99.9")
    if match is None:
        raise UserError(f"--slo {text!r} must look like 'p99<100ms' (a percentile, '<', a time in ms or s)")
    percentile, value, unit = float(match.group(1)), float(match.group(2)), match.group(3)
    if not 0 < percentile < 100:
        raise UserError(f"--slo {text!r}: the percentile must be between 0 and 100 (exclusive)")
    limit_ms = value * (1000.0 if unit == "s" else 1.0)
    if not (math.isfinite(limit_ms) and limit_ms > 0):
        raise UserError(f"--slo {text!r}: the limit must be a positive time")
    return Slo(percentile, limit_ms)
