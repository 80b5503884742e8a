"""The mix read from a log or HAR, as printed before a run: a plain table (kind, weight, share,
count) no wider than WIDTH, then what was read and what was left out, a line each.

Kinds come from a file someone else wrote: control characters are shown escaped, and a kind too
long for the table ends in an ellipsis; a long summary line wraps."""

from __future__ import annotations

import textwrap

from rich.cells import cell_len, set_cell_size

from pywebbench.plan.derived_mix import DerivedMix
from pywebbench.report.common import inert

WIDTH = 100
_GAP = "  "
_HEADERS = ("kind", "weight", "share", "count")


def mix_table_lines(mix: DerivedMix, width: int = WIDTH) -> list[str]:
    rows = [(k.kind, str(k.spec.weight), f"{k.share:.1%}", f"{k.count:,}") for k in mix.kinds]
    if mix.rest_kinds:
        rows.append((f"({mix.rest_kinds:,} other kind{'s' if mix.rest_kinds != 1 else ''}, left out)", "-",
                     f"{mix.rest_share:.1%}", f"{mix.rest_count:,}"))
    numbers = [max(len(h), *(len(row[i]) for row in rows)) for i, h in enumerate(_HEADERS) if i]
    room = width - sum(numbers) - len(_GAP) * len(numbers)
    kinds = [inert(row[0]) for row in rows]
    kind_width = max(len(_HEADERS[0]), min(room, max(cell_len(k) for k in kinds)))
    lines = [_line((_HEADERS[0], *_HEADERS[1:]), kind_width, numbers)]
    for kind, row in zip(kinds, rows):
        lines.append(_line((_fit(kind, kind_width), *row[1:]), kind_width, numbers))
    for line in mix.summary_lines():
        lines += textwrap.wrap(inert(line), width, subsequent_indent="  ", break_on_hyphens=False)
    return lines


def _line(cells: tuple[str, ...], kind_width: int, numbers: list[int]) -> str:
    first = set_cell_size(cells[0], kind_width)
    return _GAP.join([first, *(cell.rjust(w) for cell, w in zip(cells[1:], numbers))]).rstrip()


def _fit(text: str, width: int) -> str:
    """`text` cut to `width` cells, its end an ellipsis if cut."""
    if cell_len(text) <= width:
        return text
    return set_cell_size(text, width - 1) + "…"
