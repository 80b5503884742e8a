"""CSV: one row per stack x workload x knobs, the columns of report.record."""

from __future__ import annotations

import csv
import io

from pywebbench.analyze.rows import summarize
from pywebbench.report.common import inert
from pywebbench.report.record import CSV_COLUMNS, flat
from pywebbench.results.model import ResultSet


def render_csv(results: ResultSet) -> str:
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in summarize(results).rows:
        record = flat(row)
        writer.writerow({k: "" if record[k] is None else record[k] for k in CSV_COLUMNS})
    return inert(out.getvalue())  # often printed to a terminal: no control character from the data
