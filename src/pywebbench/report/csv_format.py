"""CSV: one row per stack x workload x knobs, the columns of report.record."""

from __future__ import annotations

import csv
import io

from pywebbench.analyze.rows import summarize
from pywebbench.report.common import inert
from pywebbench.report.record import PROFILE_COLUMNS, SHAPE_COLUMNS, csv_columns, flat, profile_flat, shape_flat
from pywebbench.results.model import ResultSet


def render_csv(results: ResultSet) -> str:
    out = io.StringIO()
    rows = summarize(results).rows
    profiled = any(r.profile is not None for r in rows)  # --profile's columns only where there are profiles
    shaped = any(r.shape is not None for r in rows)  # a connection shape's figures only where there is one
    columns = csv_columns() + (PROFILE_COLUMNS if profiled else ()) + (SHAPE_COLUMNS if shaped else ())
    writer = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        record = {**flat(row), **(profile_flat(row) if profiled else {}), **(shape_flat(row) if shaped else {})}
        writer.writerow({k: "" if record[k] is None else record[k] for k in columns})
    return inert(out.getvalue())  # often printed to a terminal: no control character from the data
