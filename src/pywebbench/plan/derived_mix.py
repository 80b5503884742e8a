"""A traffic mix derived from a log or HAR file (plan/traffic_import.py derives it): its kinds,
what was left out and why, its arrivals in time, and how it is said and saved."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from pywebbench.plan.logformats import LogFormat
from pywebbench.plan.traffic import RequestSpec


class Arrival(NamedTuple):
    offset_s: float
    """Seconds after the first request of the replay."""
    kind: int
    """Its index into DerivedMix.kinds."""


@dataclass(frozen=True)
class DerivedKind:
    spec: RequestSpec
    """What a replay sends: the method, the kind's most frequent concrete target, a HAR's body
    and headers, the weight."""
    kind: str
    """The normalised label, `GET /notes/{id}`."""
    count: int
    share: float
    """Its share of the requests counted (failed ones left out unless kept), 0..1."""
    status: int = 200
    """The status its requests were answered with most often in the log."""


@dataclass(frozen=True)
class DerivedMix:
    kinds: tuple[DerivedKind, ...]
    """Heaviest first."""
    source: Path
    log_format: LogFormat
    lines: int
    """Non-blank lines read (a HAR's entries)."""
    parsed: int
    """Lines read as requests (failed ones included)."""
    malformed: int
    malformed_first: tuple[int, ...]
    """The line numbers (a HAR's entry numbers) of the first few malformed ones."""
    failed_left_out: int
    rest_kinds: int
    """Kinds beyond max_kinds, left out of the mix."""
    rest_share: float
    """Their share of the requests counted, 0..1."""
    stripped_headers: tuple[str, ...]
    """Credential headers left out (lower case)."""
    arrivals: tuple[Arrival, ...]
    """The mix's requests in time order; empty if the log has no times."""
    stripped_params: tuple[str, ...] = ()
    """Credential query parameters left out."""
    other_hosts_left_out: int = 0
    """A HAR's requests to hosts other than `host`."""
    host: str = ""
    folds: tuple[str, ...] = ()
    max_kinds: int | None = None
    keep_failed: bool = False
    rest_count: int = 0
    """The requests of the kinds left out."""

    @property
    def requests(self) -> tuple[RequestSpec, ...]:
        return tuple(k.spec for k in self.kinds)

    @property
    def has_times(self) -> bool:
        """Whether the arrivals can be replayed (every request of the mix had a time)."""
        return bool(self.arrivals)

    @property
    def duration_s(self) -> float:
        return self.arrivals[-1].offset_s if self.arrivals else 0.0

    def peak_per_s(self) -> int:
        """The most arrivals in one second of the replay."""
        return max(Counter(int(a.offset_s) for a in self.arrivals).values(), default=0)

    def summary_lines(self) -> list[str]:
        """What was read and what was left out, one line each."""
        unit = "entries" if self.log_format is LogFormat.HAR else "lines"
        noun = "entry" if self.log_format is LogFormat.HAR else "line"
        read = _counted(self.lines, noun, unit)
        lines = [f"read {self.source} ({self.log_format.value}): {read}, {_counted(self.parsed, 'request')}"]
        if self.malformed:
            shown = ", ".join(str(n) for n in self.malformed_first)
            more = ", ..." if self.malformed > len(self.malformed_first) else ""
            which = noun if self.malformed == 1 else unit
            lines.append(f"malformed: {_counted(self.malformed, noun, unit)} left out ({which} {shown}{more})")
        else:
            lines.append("malformed: none")
        failed = "failed requests (status 400 and up" + (", or none)" if self.log_format is LogFormat.HAR else ")")
        if self.keep_failed:
            lines.append(f"{failed}: kept in the mix")
        else:
            lines.append(f"{failed} left out: {self.failed_left_out:,}"
                         + (" (--keep-failed keeps them)" if self.failed_left_out else ""))
        if self.other_hosts_left_out:
            lines.append(f"requests to other hosts left out: {self.other_hosts_left_out:,} (the mix is {self.host}'s)")
        if self.folds:
            lines.append(f"folded by: {', '.join(self.folds)}")
        kinds = f"mix: {_counted(len(self.kinds), 'kind')}"
        if self.rest_kinds:
            kinds += (f"; the other {self.rest_kinds:,} ({self.rest_share:.1%} of the requests) left out"
                      f" by --max-kinds {self.max_kinds}")
        lines.append(kinds)
        lines.append(self._credentials_line())
        if self.has_times:
            duration = max(self.duration_s, 1.0)
            lines.append(f"times: {self.duration_s:,.0f} s of requests, {len(self.arrivals) / duration:,.0f}/s on "
                         f"average, {self.peak_per_s():,} in the busiest second")
        else:
            lines.append("times: not every request has one, so the log cannot be replayed in time")
        return lines

    def _credentials_line(self) -> str:
        parts = []
        if self.stripped_headers:
            parts.append(f"headers {', '.join(self.stripped_headers)}")
        if self.stripped_params:
            parts.append(f"query parameters {', '.join(self.stripped_params)}")
        if not parts:
            return "credentials left out: none found"
        return f"credentials left out: {'; '.join(parts)} (--keep-header NAME keeps one)"

    def to_record(self) -> dict[str, Any]:
        """The mix as saved with the results (bodies as their length only: they may hold secrets)."""
        return {
            "source": str(self.source), "format": self.log_format.value, "lines": self.lines, "parsed": self.parsed,
            "malformed": self.malformed, "malformed_first": list(self.malformed_first),
            "failed_left_out": self.failed_left_out, "keep_failed": self.keep_failed,
            "other_hosts_left_out": self.other_hosts_left_out, "host": self.host, "folds": list(self.folds),
            "max_kinds": self.max_kinds, "rest_kinds": self.rest_kinds, "rest_share": self.rest_share,
            "rest_count": self.rest_count,
            "stripped_headers": list(self.stripped_headers), "stripped_params": list(self.stripped_params),
            "has_times": self.has_times, "duration_s": self.duration_s, "arrivals": len(self.arrivals),
            "peak_per_s": self.peak_per_s(),
            "kinds": [{"kind": k.kind, "method": k.spec.method, "path": k.spec.path, "weight": k.spec.weight,
                       "count": k.count, "share": k.share, "status": k.status, "body_bytes": len(k.spec.body),
                       "headers": [name for name, _ in k.spec.headers]} for k in self.kinds],
        }


def _counted(n: int, one: str, many: str | None = None) -> str:
    return f"{n:,} {one if n == 1 else many or one + 's'}"
