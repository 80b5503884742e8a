"""JSON: the run header, the summary rows and every trial, for other programs."""

from __future__ import annotations

import json

import cattrs

from pywebbench.analyze.rows import summarize
from pywebbench.report.record import flat, profile_flat, shape_flat
from pywebbench.results.model import ResultSet

_converter = cattrs.Converter()


def render_json(results: ResultSet) -> str:
    summary = summarize(results)
    document = {
        "run": _converter.unstructure(results.header),
        "complete": results.complete,
        "baseline": summary.baseline,
        "baseline_missing_for": list(summary.baseline_missing),
        "rows": [{**flat(row), **(profile_flat(row) if row.profile is not None else {}),
                  **(shape_flat(row) if row.shape is not None else {})} for row in summary.rows],
        "trials": [_converter.unstructure(t) for t in results.trials],
        "environments": {k: _converter.unstructure(v) for k, v in results.environments.items()},
        **({"profiles": [_converter.unstructure(p) for p in results.profiles]} if results.profiles else {}),
    }
    return json.dumps(document, indent=2, sort_keys=True) + "\n"
