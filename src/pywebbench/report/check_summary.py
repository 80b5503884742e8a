"""A row's failed checks summed up, one line per kind: how many of its windows each flagged and,
where the notes carry a figure, its range ("busy-machine in 6 of 12 windows, 28-78% of a core").

A check fires per window (measure/checks.py writes one sentence per flagged window); a busy
machine flags dozens of them, and one line each buried the tables. Every format prints these
lines instead, the windows' own sentences a click away in HTML. The figures are read back from
the sentences only where a sentence has exactly the shape measure/checks.py writes; any other
shape (an older wording, a hand-edited file) keeps its count and loses the range.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from pywebbench.analyze.rows import Row
from pywebbench.measure.checks import Check, check_name


@dataclass(frozen=True)
class Figure:
    """How one kind's sentence carries its figure: `value` is the number that ranges; every
    other named group must read the same in all the row's windows, or no range is given."""

    pattern: re.Pattern[str]
    template: str
    """The range in words: {range} and the other groups by name."""


_NUMBER = r"[\d,]+(?:\.\d+)?"
FIGURES: Mapping[str, Figure] = {
    Check.LITTLES_LAW: Figure(re.compile(
        rf"littles-law: {_NUMBER} req/s x {_NUMBER} ms = (?P<value>{_NUMBER}) in flight, but "
        r"(?P<connections>\d+) connections"), "{range} in flight of {connections} connections"),
    Check.BUSY_MACHINE: Figure(re.compile(r"busy-machine: other processes used (?P<value>\d+)% of a core"),
                               "{range}% of a core"),
    Check.BUSY_NEIGHBOURS: Figure(re.compile(
        rf"busy-neighbours: the other live servers used (?P<value>\d+)% of a core \({_NUMBER} s in the "
        rf"{_NUMBER} s window\)"), "{range}% of a core"),
    Check.GENERATOR_SATURATED: Figure(re.compile(
        r"generator-saturated: (?P<generator>\S+) used (?P<value>\d+)% of (?P<cpus>\d+ CPUs?)"),
        "{generator} at {range}% of {cpus}"),
    Check.NEAR_CEILING: Figure(re.compile(
        rf"near-ceiling: {_NUMBER} req/s is (?P<value>\d+)% of the (?P<ceiling>{_NUMBER}) req/s "
        r"(?P<generator>\S+) reaches against nginx static"), "{range}% of the {ceiling} req/s {generator} ceiling"),
    Check.ERRORS: Figure(re.compile(
        r"errors: (?P<value>\d+) of \d+ \(connect \d+, read \d+, write \d+, timeout \d+, non-2xx \d+\)"),
        "{range} failed requests"),
    Check.RATE_NOT_REACHED: Figure(re.compile(
        rf"rate-not-reached: (?P<value>{_NUMBER}) of (?P<offered>{_NUMBER}) req/s offered"),
        "{range} of {offered} req/s reached"),
}
"""Kinds whose sentences carry a figure worth a range; the rest are counted only."""

ROW_CHECKS = frozenset({Check.SPREAD})
"""Kinds decided once per row, not per window (the spread of its repeats): shown as written."""


@dataclass(frozen=True)
class CheckLine:
    """One kind of check on one row, summed up over the row's windows."""

    kind: str
    text: str
    """'littles-law in 5 of 12 windows, 18.2-40.9 in flight of 100 connections'."""
    notes: tuple[tuple[str, int], ...] = ()
    """The flagged windows' own sentences, each once, with how many windows wrote it."""


def figure_range(kind: str, sentences: Sequence[str]) -> str:
    """The range of the kind's figure over these sentences ('28-78% of a core'), or '' when the
    kind has no figure or any sentence is not in the shape measure/checks.py writes."""
    figure = FIGURES.get(kind)
    if figure is None or not sentences:
        return ""
    matches = [figure.pattern.fullmatch(s.strip()) for s in sentences]
    if any(m is None for m in matches):
        return ""
    found = [m for m in matches if m is not None]
    others = {name for name in figure.pattern.groupindex if name != "value"}
    if any(len({m[name] for m in found}) > 1 for name in others):
        return ""  # windows of different settings: one range would mix them
    values = sorted(found, key=lambda m: float(m["value"].replace(",", "")))
    low, high = values[0]["value"], values[-1]["value"]
    spread = low if float(low.replace(",", "")) == float(high.replace(",", "")) else f"{low}-{high}"
    return figure.template.format(range=spread, **{name: found[0][name] for name in others})


def summarize_checks(row_checks: Sequence[str], windows: Sequence[Sequence[str]],
                     total: int) -> tuple[CheckLine, ...]:
    """One line per kind, in the order the row's checks first name them, out of `total` windows.

    `windows` holds each window's checks (a window flagged twice by one kind counts once);
    without them, each distinct sentence of the row stands for one window (a lower bound).
    """
    per_window = windows or [(c,) for c in row_checks]
    lines: list[CheckLine] = []
    for kind in dict.fromkeys(check_name(c) for c in row_checks):
        flagged = [[c for c in w if check_name(c) == kind] for w in per_window]
        count = sum(1 for w in flagged if w)
        if kind in ROW_CHECKS or not count:  # the row's own finding, or none of its windows': as written
            lines.extend(CheckLine(kind, c) for c in row_checks if check_name(c) == kind)
            continue
        sentences = [c for w in flagged for c in w]
        of = max(total, count)  # a row's count of windows, never fewer than it names
        text = f"{kind} in {count} of {of} window{'s' if of != 1 else ''}"
        spread = figure_range(kind, sentences)
        lines.append(CheckLine(kind, f"{text}, {spread}" if spread else text, tuple(Counter(sentences).items())))
    return tuple(lines)


def check_lines(row: Row) -> tuple[CheckLine, ...]:
    return summarize_checks(row.checks, row.window_checks, row.trials)


def check_kinds(row: Row) -> tuple[str, ...]:
    """The kinds of check the row failed, each once: a line each under its table."""
    return tuple(dict.fromkeys(check_name(c) for c in row.checks))


def kinds(rows: Iterable[Row]) -> list[str]:
    """The kinds of check these rows failed, each once, in order: the advice to print."""
    return list(dict.fromkeys(kind for row in rows for kind in check_kinds(row)))
