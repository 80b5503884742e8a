"""docs/layout.md's recipes kept true: each knob and each load generator is in every place the
recipe names, so one added with a place forgotten fails here, not in a user's sweep."""

from __future__ import annotations

import dataclasses

from pywebbench.loadgen.registry import GENERATORS
from pywebbench.plan.declared import OPTIONS
from pywebbench.plan.knobs import knob_labels
from pywebbench.plan.options import GENERATOR_NAMES, RunOptions
from pywebbench.plan.sweep import Knob
from pywebbench.report.html_charts import AXES
from pywebbench.results.model import TrialSpec
from pywebbench.stage.doctor import check

SPEC = TrialSpec("t", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "wrk", method="interleaved")
SETTINGS: dict[str, object] = {
    "connections": 64, "workers": 4, "threads": 8, "max_db_sessions": 20, "db_delay_s": 0.02, "db_pool": 5,
    "upstream_delay_s": 0.05, "cpu_size": 5000, "stack_cpus": (1,), "rate": 500.0, "rtt_s": 0.002,
    "cpu_quota": 0.5, "memory_limit": 256 * 2**20, "python": "3.12", "pin": "gunicorn==22.0.0",
    "protocol": "h2c",
}
"""A value of each knob as a window's TrialSpec holds it (the test fails first for a new knob)."""


def test_every_knob_is_an_option_a_spec_field_a_label_and_a_chart_axis() -> None:
    options = {f.name for f in dataclasses.fields(RunOptions)}
    spec_fields = {f.name for f in dataclasses.fields(TrialSpec)}
    declared = {o.field for o in OPTIONS}
    axes = {a.field: a for a in AXES}
    for knob in Knob:
        field = knob.field
        assert field in options, f"{knob}: no RunOptions field {field}"
        assert field in declared, f"{knob}: not declared in plan/declared.OPTIONS"
        assert field in spec_fields, f"{knob}: windows do not record {field} (results/model.TrialSpec)"
        assert field in SETTINGS, f"{knob}: give this test a value of it"
        varied = dataclasses.replace(SPEC, **{field: SETTINGS[field]})
        assert knob_labels(varied) != knob_labels(dataclasses.replace(varied, **{field: _blank(field)})), \
            f"{knob}: plan/knobs.knob_labels does not say it"
        axis = axes.get(field)
        assert axis is not None, f"{knob}: no chart axis in report/html_charts.AXES"
        assert axis.value(varied) is not None and axis.value(axis.blank(varied)) in (None, 0.0), knob


def _blank(field: str) -> object:
    return {"connections": 1, "stack_cpus": (), "db_pool": 0}.get(field)


def test_every_generator_is_named_made_and_checked_before_a_run() -> None:
    tools = {r.name for r in check()}
    assert set(GENERATOR_NAMES) == set(GENERATORS)
    for name in GENERATOR_NAMES:
        assert GENERATORS[name]().name == name
        assert name in tools, f"{name}: stage/doctor.check has no requirement for it"
