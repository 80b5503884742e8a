"""A sweep's axes in a table of rows: the cell knobs that vary, and each row's point on them."""

from __future__ import annotations

from pywebbench.analyze.rows import CELL_KNOBS, Row
from pywebbench.plan.knobs import knob_short


def varying_knobs(rows: tuple[Row, ...] | list[Row]) -> tuple[str, ...]:
    """The cell knobs (workload aside) that take more than one value across these rows: a sweep's axes."""
    cells = {r.spec.cell for r in rows}
    return tuple(name for i, name in enumerate(CELL_KNOBS)
                 if name != "workload" and len({cell[i] for cell in cells}) > 1)


def knob_values(row: Row, knobs: tuple[str, ...]) -> tuple[object, ...]:
    cell = row.spec.cell
    return tuple(getattr(cell, k) for k in knobs)


def point_text(row: Row, knobs: tuple[str, ...]) -> str:
    """'connections=100 db_delay=20ms' for a row's values of the varying knobs."""
    return " ".join(knob_short(name, value) for name, value in zip(knobs, knob_values(row, knobs), strict=True)) \
        or "defaults"
