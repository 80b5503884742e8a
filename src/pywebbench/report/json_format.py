"""JSON: the run header, the summary rows and every trial, for other programs."""

from __future__ import annotations

import json

import cattrs

from pywebbench.analyze.rows import summarize
from pywebbench.report.record import flat
from pywebbench.results.model import ResultSet

_converter = cattrs.Converter()


def render_json(results: ResultSet) -> str:
    summary = summarize(results)
    document = {
        "run": _converter.unstructure(results.header),
        "complete": results.complete,
        "baseline": summary.baseline,
        "baseline_missing_for": list(summary.baseline_missing),
        "rows": [flat(row) for row in summary.rows],
        "trials": [_converter.unstructure(t) for t in results.trials],
        "environments": {k: _converter.unstructure(v) for k, v in results.environments.items()},
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
