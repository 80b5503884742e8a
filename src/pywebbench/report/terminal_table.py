"""The terminal's result table, fitted to the terminal's width without ever cutting a cell.

Rich squeezes a table wider than the console and ends the cut cells with an ellipsis, and
the first it cut was the ratio's interval (`14.522-1…`), the figure the tool exists for. So
the table is sized here instead: every column as wide as its widest cell (a header may wrap
between words), and columns left out until the table fits. By default it shows a few columns
(ESSENTIAL); `--wide` shows every terminal column, at the width they need.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.cells import cell_len
from rich.table import Table

from pywebbench.report.columns import Column, Format, TableInfo, row_cells, shown
from pywebbench.report.shape_columns import SHOWN

ESSENTIAL: tuple[str, ...] = ("stack", "ratio", "protocol", *dict.fromkeys(n for names in SHOWN.values() for n in names),
                               "python", "valid", "rps", "next", "cpu_ms_per_req", "rss")
"""The default table's columns, most essential first (shown in COLUMNS' order). Where the terminal
is too narrow for them all they go from the end: memory, then CPU per request, the verdict against
the next row, req/s (the ratio is the comparison), then validity (the (!) lines below still say it),
then the interpreter that ran (a column only where one was asked for or is free-threaded), then a
connection shape's own figures (only in that shape's table) and the protocol; never the stack or
the ratio with its interval."""

KEPT = 2
"""The first ESSENTIAL columns no width takes away: the stack and the ratio with its interval."""

STACK_MIN = 12
"""The narrowest the stack column folds to (its label over several lines, never cut)."""


@dataclass(frozen=True)
class Fitted:
    """A cell's table as it will print: its columns, each one's width, and the cells' text."""

    columns: tuple[Column, ...]
    widths: tuple[int, ...]
    cells: tuple[tuple[str, ...], ...]

    @property
    def width(self) -> int:
        """Characters a line of it takes: each column padded by one space a side, and n + 1 rules."""
        return sum(self.widths) + 3 * len(self.widths) + 1


def _text_width(text: str) -> int:
    return max((cell_len(line) for line in text.splitlines()), default=0)


def _needed(column: Column, texts: Sequence[str]) -> int:
    """The widest cell; the header's longest word, since a header may wrap between words."""
    header = max((_text_width(word) for word in column.header_in(Format.TERMINAL).split()), default=1)
    return max([header, *(_text_width(t) for t in texts)])


def _fitted(info: TableInfo, columns: Sequence[Column]) -> Fitted:
    cells = tuple(tuple(c.text for c in row_cells(Format.TERMINAL, info, columns, row)) for row in info.rows)
    widths = tuple(_needed(column, [r[i] for r in cells]) for i, column in enumerate(columns))
    return Fitted(tuple(columns), widths, cells)


def fit(info: TableInfo, width: int, wide: bool = False) -> Fitted:
    """The columns and widths of a cell's table for a terminal `width` wide (see ESSENTIAL).

    Wide, every column stays and the table takes the width it needs. Otherwise, where even the
    stack and the ratio do not fit, the stack's label folds over lines; narrower than that, the
    table is still printed whole, wider than asked.
    """
    every = shown(Format.TERMINAL, info)
    if wide:
        return _fitted(info, every)
    kept = [name for name in ESSENTIAL if any(c.name == name for c in every)]
    table = _fitted(info, [c for c in every if c.name in kept])
    while table.width > width and len(kept) > KEPT:
        kept.pop()
        table = _fitted(info, [c for c in every if c.name in kept])
    if table.width > width and table.columns[0].name == "stack":
        stack = max(STACK_MIN, table.widths[0] - (table.width - width))
        table = Fitted(table.columns, (min(stack, table.widths[0]), *table.widths[1:]), table.cells)
    return table


def cell_table(fitted: Fitted) -> Table:
    """One workload x setting: a row per stack, in the order the summary ranked them. Its title
    (common.cell_title) is printed above it at the terminal's width, not wrapped at the table's."""
    table = Table()
    for column, size in zip(fitted.columns, fitted.widths, strict=True):
        # A set width: rich never squeezes the column, and the stack's label folds rather than being cut.
        table.add_column(column.header_in(Format.TERMINAL), justify=column.align.value, width=size,
                         overflow="fold")
    for cells in fitted.cells:
        table.add_row(*cells)
    return table
