"""Several generators' windows as one: counts summed, percentiles from the merged raw record.

Averaging percentiles is wrong (the p99 of two halves is not the mean of their p99s), so each
generator sends its raw latency record (wrk: every distinct microsecond value with its count)
and the percentiles are read off the sum of the records, with wrk's own rank rule.

wrk's record is the one its own percentiles come from: after its coordinated-omission
correction (stats_correct adds synthetic samples for responses slower than the mean interval),
so it can hold more values than requests. Each generator's record is corrected at its own
interval, and merging keeps each one as its generator reported it.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pywebbench.results.model import Latency, LoadResult, SocketErrors

SPECTRUM = (0.0, 1.0, 5.0, 10.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0, 70.0, 75.0, 80.0, 85.0, 90.0, 95.0, 97.5,
            99.0, 99.5, 99.9, 99.95, 99.99, 100.0)
"""The percentiles wrk_report.lua writes, so a merged result reads like a single one."""


@dataclass(frozen=True)
class Histogram:
    """Latency values in microseconds with their counts, ascending."""

    counts: tuple[tuple[int, int], ...]

    @property
    def total(self) -> int:
        return sum(c for _, c in self.counts)

    def percentile(self, p: float) -> int:
        """wrk's rule (stats_percentile): the first value whose running count reaches the rank."""
        if not self.counts:
            return 0
        if p <= 0:
            return self.counts[0][0]
        rank = math.floor((p / 100.0) * self.total + 0.5 + 0.5)  # C's round(), half away from zero
        running = 0
        for value, count in self.counts:
            running += count
            if running >= rank:
                return value
        return self.counts[-1][0]


def merge_histograms(parts: Iterable[Histogram]) -> Histogram:
    total: Counter[int] = Counter()
    for part in parts:
        for value, count in part.counts:
            total[value] += count
    return Histogram(tuple(sorted(total.items())))


def parse_histogram(pairs: Sequence[Sequence[int]]) -> Histogram:
    return merge_histograms([Histogram(tuple((int(v), int(c)) for v, c in pairs))])


def latency_of(histogram: Histogram) -> Latency:
    n = histogram.total
    if n == 0:
        return Latency(0.0, 0.0, 0.0, tuple((p, 0.0) for p in SPECTRUM))
    mean = sum(v * c for v, c in histogram.counts) / n
    var = sum(c * (v - mean) ** 2 for v, c in histogram.counts) / (n - 1) if n > 1 else 0.0
    return Latency(mean / 1000.0, math.sqrt(var) / 1000.0, histogram.counts[-1][0] / 1000.0,
                   tuple((p, histogram.percentile(p) / 1000.0) for p in SPECTRUM))


def merge_results(results: Sequence[LoadResult], histograms: Sequence[Histogram]) -> LoadResult:
    """One LoadResult for generators that loaded the same window side by side.

    Requests, errors and bytes are summed; throughput is summed too, by giving the merged
    result the duration at which its requests make the sum of each generator's own rate.
    """
    if not results or len(results) != len(histograms):
        raise ValueError("merging needs one raw latency record per generator result")
    requests = sum(r.requests for r in results)
    rate = sum(r.requests / r.duration_s for r in results if r.duration_s > 0)
    return LoadResult(
        generator="+".join(sorted({r.generator for r in results})) + f" x{len(results)}",
        requests=requests,
        duration_s=requests / rate if rate > 0 else max(r.duration_s for r in results),
        socket_errors=SocketErrors(
            connect=sum(r.socket_errors.connect for r in results),
            read=sum(r.socket_errors.read for r in results),
            write=sum(r.socket_errors.write for r in results),
            timeout=sum(r.socket_errors.timeout for r in results),
        ),
        non_2xx=sum(r.non_2xx for r in results),
        latency=latency_of(merge_histograms(histograms)),
        bytes_read=sum(r.bytes_read for r in results),
        command=tuple(word for r in results for word in (*r.command, ";"))[:-1],
    )
