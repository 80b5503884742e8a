"""The python and pin knobs in every place a knob lives (issue 47 items 1 and 3): read from
--knob and from --python/--pin, each value a cell of its own in the plan with a file-safe trial id,
said in words, recorded in results (schema 7; a schema-6 file still loads), drawn on a
categorical chart axis, exported as a column, and refused before anything starts when this
machine has no such interpreter or the run is placed on other hosts."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from pywebbench.commands.arguments import build_parser
from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.measure.env_preflight import environment_problems
from pywebbench.plan.declared import Command, flags_of, take_refused
from pywebbench.plan.knobs import knob_labels
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan
from pywebbench.plan.sweep import Knob, grid, parse_knob, parse_knobs
from pywebbench.report.html import render_html
from pywebbench.report.html_charts import axes as chart_axes
from pywebbench.report.record import csv_columns
from pywebbench.results.model import SCHEMA_VERSION, TrialSpec
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, trial

SPEC = TrialSpec("t", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "wrk")


def test_python_values_are_read_normalised_and_deduplicated() -> None:
    axis = parse_knob("python=3.11, 3.14T,pypy3,3.11")
    assert (axis.knob, axis.values) == (Knob.PYTHON, ("3.11", "3.14t", "pypy3"))
    with pytest.raises(UserError, match=r"^python: 'jython' is not an interpreter"):
        parse_knob("python=3.11,jython")


def test_two_text_axes_make_a_grid_of_cells() -> None:
    points = grid(parse_knobs(["python=3.11,3.12", "pin=gunicorn==22.0.0,gunicorn==23.0.0"]))
    assert [p.label for p in points] == [
        "python=3.11 pin=gunicorn==22.0.0", "python=3.11 pin=gunicorn==23.0.0",
        "python=3.12 pin=gunicorn==22.0.0", "python=3.12 pin=gunicorn==23.0.0"]


def test_the_flags_take_one_value_each_for_run_app_and_calibrate() -> None:
    for command in ("run", "calibrate", "sweep"):
        args = build_parser().parse_args([command, "--python", "3.12", "--pin", "gunicorn>=22,<23"])
        flags = flags_of(args, Command(command))
        assert (flags["python"], flags["pin"]) == ("3.12", "gunicorn>=22,<23")
    args = build_parser().parse_args(["app", "--app", "m:app", "--python", "pypy3"])
    assert flags_of(args, Command.APP)["python"] == "pypy3"
    refused = take_refused(build_parser().parse_args(["run", "--python", "3.11,3.12"]))
    assert len(refused) == 1 and refused[0].startswith("argument --python: "), refused


def test_each_value_is_a_cell_with_a_file_safe_trial_id() -> None:
    catalog = build_catalog()
    options = RunOptions(stacks=("flask:gunicorn-sync",), repeats=1, seed=1)
    points = [tuple(p.overrides().items()) for p in
              grid(parse_knobs(["python=3.11,/opt/python/bin/python3", "pin=x@git+file:///r@v1"]))]
    plan = make_plan(catalog, options, (0, 1), points)
    specs = plan.trials
    assert {(t.python, t.pin) for t in specs} == {("3.11", "x@git+file:///r@v1"),
                                                  ("/opt/python/bin/python3", "x@git+file:///r@v1")}
    assert len({t.cell for t in specs}) == 2
    for spec in specs:
        assert "/" not in spec.trial_id.split(":", 1)[1] and re.fullmatch(r"[\w.:=+,#<>~!-]+", spec.trial_id)
    assert make_plan(catalog, options, (0, 1), points).trials == specs  # the same ids again (a resume)


def test_the_knobs_in_words_and_on_the_chart_axis() -> None:
    varied = dataclasses.replace(SPEC, python="3.14t", pin="gunicorn==22.0.0")
    assert knob_labels(varied)[-2:] == ["Python 3.14t", "pin gunicorn==22.0.0"]
    axes = {a.field: a for a in chart_axes()}
    assert axes["python"].value(varied) == "3.14t" and axes["python"].value(axes["python"].blank(varied)) is None
    assert {"python", "pin"} <= set(csv_columns())


def test_results_keep_what_was_asked_and_what_ran(tmp_path: Path) -> None:
    one = trial("flask:gunicorn-sync", 1000.0)
    asked = dataclasses.replace(one, spec=dataclasses.replace(one.spec, python="3.14t", pin="gunicorn==22.0.0"),
                                stack=dataclasses.replace(one.stack, interpreter="CPython 3.14.7t (/x/python3.14t)",
                                                          gil="off"))
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_trial(asked)
    writer.finish("complete")
    writer.close()
    loaded = load_results(tmp_path).trials[0]
    assert (loaded.spec.python, loaded.spec.pin, loaded.stack.interpreter, loaded.stack.gil) == (
        "3.14t", "gunicorn==22.0.0", "CPython 3.14.7t (/x/python3.14t)", "off")
    assert SCHEMA_VERSION == 7


def test_a_sweep_of_interpreters_is_charted_on_a_categorical_axis(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    for python, rps in (("3.11", 1000.0), ("3.12", 1100.0), ("pypy3", 2000.0)):
        for round_no in (1, 2):
            one = trial("flask:gunicorn-sync", rps, round_no=round_no)
            writer.add_trial(dataclasses.replace(one, spec=dataclasses.replace(
                one.spec, python=python, trial_id=f"{one.spec.trial_id}-python={python}")))
    writer.finish("complete")
    writer.close()
    page = render_html(load_results(tmp_path), plotly_src="plotly.js")
    assert "req/s and p99 against interpreter" in page and '"type":"category"' in page


def test_a_schema_6_file_loads_with_nothing_asked(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_trial(trial("flask:gunicorn-sync", 1000.0))
    writer.finish("complete")
    writer.close()
    lines = results_path(tmp_path).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    records[0]["schema_version"] = 6
    for record in records:
        if record.get("record") == "trial":
            for key in ("python", "pin"):
                record["spec"].pop(key)
            for key in ("interpreter", "gil"):
                record["stack"].pop(key)
    results_path(tmp_path).write_text("".join(json.dumps(r) + "\n" for r in records))
    loaded = load_results(tmp_path)
    assert loaded.header.schema_version == 7
    assert (loaded.trials[0].spec.python, loaded.trials[0].stack.interpreter) == (None, None)


def test_an_interpreter_not_here_or_a_placed_run_is_refused_before_anything_starts(tmp_path: Path) -> None:
    asked = [dataclasses.replace(SPEC, python="3.99"), dataclasses.replace(SPEC, python="3.99")]
    problems = environment_problems(asked, placed=False)
    assert len(problems) == 1 and problems[0].startswith("python: no interpreter here is 3.99; found: ")
    assert environment_problems(asked, placed=True) == [
        "--python and --pin (and their knobs) build each stack's environment on this machine: "
        "not with --hosts or --topology netns"]
    assert environment_problems([SPEC], placed=True) == []
    with_pin = [dataclasses.replace(SPEC, pin=f"x@git+file://{tmp_path}@v1")]
    assert "pin: " in environment_problems(with_pin, placed=False)[0]
