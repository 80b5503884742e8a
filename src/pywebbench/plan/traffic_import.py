"""A traffic mix derived from an access log or a HAR file: `app --from-log FILE`, `--from-har FILE`.

The requests (plan/logformats.py reads them) are grouped into kinds by method and normalised target
(plan/folding.py: ids, UUIDs, hex strings and tokens in paths fold, query strings stay as observed
unless a `--fold` rule says otherwise). Each kind becomes a RequestSpec whose weight is its share of
the requests (whole numbers summing to MAX_WEIGHT, by largest remainder, at least 1 each) and whose
path is the kind's most frequent concrete target, so a replay hits a real resource. From a HAR a
kind also takes its body and its headers, without credentials (unless named to keep) and without
the headers a replay must not copy. Failed requests (status 400 and up, or a HAR's 0) are left out
unless kept; with `max_kinds` only the heaviest kinds stay, and the share of the rest is said. A HAR
whose requests go to several hosts gives the mix of one: the busiest unless `host` names it.

The arrivals (each request's offset from the first and its kind) are what a replay sends; a log
with whole-second times spreads each second's requests evenly within it, so every second holds as
many as the log's.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.plan.derived_mix import Arrival, DerivedKind, DerivedMix
from pywebbench.plan.folding import Folder, FoldRule, credential_header, dropped_header, parse_fold, parse_folds
from pywebbench.plan.logformats import MALFORMED_SHOWN, Entry, LogFormat, Reading, read_log
from pywebbench.plan.traffic import MAX_WEIGHT, RequestSpec

__all__ = ["Arrival", "DerivedKind", "DerivedMix", "FoldRule", "LogFormat", "arrivals", "derive_mix",
           "largest_remainder", "parse_fold", "parse_folds"]


@dataclass
class _Tally:
    """The requests of a reading sorted into kinds."""

    counts: Counter[str] = field(default_factory=Counter)
    targets: dict[str, Counter[str]] = field(default_factory=dict)
    statuses: dict[str, Counter[int]] = field(default_factory=dict)
    shapes: dict[tuple[str, str], Counter[tuple[bytes, tuple[tuple[str, str], ...]]]] = field(default_factory=dict)
    """(kind, target) -> the bodies and headers sent to it (a HAR's)."""
    stamps: list[tuple[float | None, str]] = field(default_factory=list)
    failed: int = 0
    other_host: int = 0
    malformed: list[int] = field(default_factory=list)
    headers: set[str] = field(default_factory=set)
    params: set[str] = field(default_factory=set)


def derive_mix(path: Path, *, max_kinds: int | None = None, folds: Sequence[FoldRule] = (),
               keep_headers: Sequence[str] = (), keep_failed: bool = False, log_format: LogFormat | None = None,
               host: str | None = None) -> DerivedMix:
    """The traffic mix of an access log or HAR file (see the module's docstring).

    `keep_headers` names headers (and credential-like query parameters) to keep, any case; `host`
    picks a HAR's host (by default the one most of its requests went to)."""
    if max_kinds is not None and max_kinds < 1:
        raise UserError(f"--max-kinds must be at least 1, got {max_kinds}")
    reading = read_log(path, log_format)
    hosts = Counter(e.host for e in reading.entries if e.host)
    chosen = (host or "").lower() or (hosts.most_common(1)[0][0] if hosts else "")
    if host and chosen not in hosts:
        raise UserError(f"{path}: no request went to host {host!r}; its hosts: {', '.join(sorted(hosts)) or 'none'}")
    tally = _tally(reading, Folder(folds, keep_headers), frozenset(h.lower() for h in keep_headers), chosen,
                   keep_failed)
    if not tally.counts:
        raise UserError(f"{path}: no usable request in {reading.lines} {_noun(reading)} "
                        f"({reading.malformed + len(tally.malformed)} malformed, {tally.failed} failed"
                        f"{', ' + str(tally.other_host) + ' to other hosts' if tally.other_host else ''})")
    malformed = sorted([*reading.malformed_first, *tally.malformed])
    ranked = sorted(tally.counts.items(), key=lambda item: -item[1])  # stable: first seen first among equals
    kept = ranked[:max_kinds] if max_kinds is not None else ranked
    total = sum(tally.counts.values())
    weights = largest_remainder([count for _, count in kept])
    kinds = tuple(DerivedKind(_spec(kind, tally, weight), kind, count, count / total,
                              tally.statuses[kind].most_common(1)[0][0])
                  for (kind, count), weight in zip(kept, weights))
    rest = sum(count for _, count in ranked[len(kept):])
    return DerivedMix(
        kinds, path, reading.log_format, reading.lines, len(reading.entries) - len(tally.malformed),
        reading.malformed + len(tally.malformed), tuple(malformed[:MALFORMED_SHOWN]), tally.failed,
        len(ranked) - len(kept), rest / total, tuple(sorted(tally.headers)),
        arrivals(tally.stamps, [k.kind for k in kinds]), stripped_params=tuple(sorted(tally.params)),
        other_hosts_left_out=tally.other_host, host=chosen, folds=tuple(rule.text for rule in folds),
        max_kinds=max_kinds, keep_failed=keep_failed, rest_count=rest)


def _noun(reading: Reading) -> str:
    return "entries" if reading.log_format is LogFormat.HAR else "lines"


def _tally(reading: Reading, folder: Folder, keep: frozenset[str], host: str, keep_failed: bool) -> _Tally:
    tally = _Tally()
    har = reading.log_format is LogFormat.HAR
    for entry in reading.entries:
        if entry.host != host:
            tally.other_host += 1
            continue
        if (entry.status >= 400 or entry.status == 0) and not keep_failed:
            tally.failed += 1
            continue
        if not entry.method:
            tally.malformed.append(entry.line)
            continue
        folded = folder.fold(entry.target)
        tally.params.update(folded.stripped)
        kind = f"{entry.method} {folded.kind}"
        tally.counts[kind] += 1
        tally.targets.setdefault(kind, Counter())[folded.target] += 1
        tally.statuses.setdefault(kind, Counter())[entry.status] += 1
        tally.stamps.append((entry.time, kind))
        if har:
            shape = (entry.body, _headers(entry, keep, tally.headers))
            tally.shapes.setdefault((kind, folded.target), Counter())[shape] += 1
    return tally


def _headers(entry: Entry, keep: frozenset[str], stripped: set[str]) -> tuple[tuple[str, str], ...]:
    """A HAR request's headers a replay sends: no credentials (their names go to `stripped`),
    none of the dropped ones, and its body's content type."""
    headers = []
    for name, value in entry.headers:
        if dropped_header(name):
            continue
        if credential_header(name, keep):
            stripped.add(name.lower() if name.isprintable() else repr(name))
            continue
        headers.append((name, value))
    if entry.body and entry.content_type and not any(n.lower() == "content-type" for n, _ in headers):
        headers.append(("Content-Type", entry.content_type))
    return tuple(headers)


def _spec(kind: str, tally: _Tally, weight: int) -> RequestSpec:
    method = kind.partition(" ")[0]
    target = tally.targets[kind].most_common(1)[0][0]
    shapes = tally.shapes.get((kind, target))
    body, headers = shapes.most_common(1)[0][0] if shapes else (b"", ())
    if method in ("GET", "HEAD"):
        body = b""
    return RequestSpec(method, target, body, None, headers, weight)


def largest_remainder(counts: Sequence[int], total: int = MAX_WEIGHT) -> list[int]:
    """Whole weights in proportion to `counts` summing to `total`, by largest remainder: each share
    within one unit (0.1 percentage point at 1000) of the counts'. A kind under one unit still gets
    1, taken from the others in proportion (so n such kinds move the rest by up to n units in all).
    With more kinds than units, each gets its rounded share and at least 1."""
    if not counts:
        return []
    if len(counts) >= total:
        whole = sum(counts)
        return [min(total, max(1, round(total * c / whole))) for c in counts]
    ones: set[int] = set()
    while True:
        free = [i for i in range(len(counts)) if i not in ones]
        units, mass = total - len(ones), sum(counts[i] for i in free)
        quotas = {i: units * counts[i] / mass for i in free}
        small = {i for i, quota in quotas.items() if quota < 1}
        if not small:
            break
        ones |= small
    weights = [1] * len(counts)
    for i, quota in quotas.items():
        weights[i] = int(quota)
    left = units - sum(weights[i] for i in free)
    for i in sorted(free, key=lambda i: (-(quotas[i] - int(quotas[i])), i))[:left]:
        weights[i] += 1
    return weights


def arrivals(stamps: Sequence[tuple[float | None, str]], kinds: Sequence[str]) -> tuple[Arrival, ...]:
    """The requests of `kinds` in time order, as offsets from the first; none if any lacks a time.

    Whole-second times (a combined log's) are spread evenly within their second, in log order."""
    index = {kind: i for i, kind in enumerate(kinds)}
    timed = [(time, index[kind]) for time, kind in stamps if kind in index]
    if not timed or any(time is None for time, _ in timed):
        return ()
    ordered = sorted(((t, k) for t, k in timed if t is not None), key=lambda item: item[0])
    first = ordered[0][0]
    if any(t != int(t) for t, _ in ordered):
        return tuple(Arrival(round(t - first, 6), k) for t, k in ordered)  # to the microsecond: epoch floats
    spread: list[Arrival] = []
    start = 0
    while start < len(ordered):
        second, end = ordered[start][0], start
        while end < len(ordered) and ordered[end][0] == second:
            end += 1
        n = end - start
        spread.extend(Arrival(second - first + j / n, ordered[start + j][1]) for j in range(n))
        start = end
    return tuple(spread)
