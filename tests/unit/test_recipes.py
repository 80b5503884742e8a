"""docs/layout.md's recipes kept true: each knob and each load generator is in every place the
recipe names, so one added with a place forgotten fails here, not in a user's sweep.

A knob is one declaration (plan/knob_declarations.py); `recipe_problems` follows one from the
`--knob` text to a planned sweep, its words, the results file, its CSV and JSON columns and its
chart axis, and a knob without a field of its own also to its flag, help, reference row, config
key, environment variable, one-line refusal (tests/support/recipe_knob.py) and the app environment
it declares. It is run on every declared knob, on throwaway knobs this file registers (one over an
existing field, one with none), and with each place that derives from the declarations made to
drop that knob, to show each check can fail.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.loadgen.registry import GENERATORS
from pywebbench.plan import declared
from pywebbench.plan import knobs as knob_words
from pywebbench.plan import sessions
from pywebbench.plan import sweep
from pywebbench.plan.declared import KNOB_FIELD, OPTIONS, all_options
from pywebbench.plan.knob_declarations import Kind, Knob, declared_knobs, register_knob, withdraw_knob
from pywebbench.plan.knobs import knob_labels
from pywebbench.plan.options import GENERATOR_NAMES, TOPOLOGIES, RunOptions
from pywebbench.plan.sessions import make_plan
from pywebbench.plan.sweep import grid, parse_knob
from pywebbench.plan.text_knobs import TextGrammar
from pywebbench.report import html_charts, record
from pywebbench.report.formats import renderer
from pywebbench.results.model import Cell, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.stage.doctor import check
from support.builders import header, stack
from support.fake_loadgen import synthetic_result
from support.recipe_knob import SPIN, fieldless_problems

SWEEPS: dict[str, tuple[str, str, str]] = {
    "connections": ("10,20", "0", "hello"), "workers": ("auto,2", "-1", "hello"), "threads": ("2,4", "1.5", "hello"),
    "max_db_sessions": ("20,40", "0", "db"), "db_delay": ("0,20ms", "-1ms", "db"),
    "upstream_delay": ("0,50ms", "soon", "upstream"), "stack_cpus": ("1,2", "0", "hello"),
    "rate": ("100,200", "0", "hello"), "db_pool": ("0,2", "-1", "db"), "cpu_size": ("1000,2000", "0", "cpu"),
    "rtt": ("0,2ms", "-2ms", "hello"), "cpu_quota": ("0.5,1", "0.001", "hello"),
    "memory_limit": ("256M,512M", "1K", "hello"), "python": ("3.11,3.12", "jython", "hello"),
    "pin": ("gunicorn==22.0.0,gunicorn==23.0.0", "==", "hello"), "protocol": ("h1,h1-tls", "spdy", "hello"),
}
"""Per knob: two values to sweep, a value its grammar refuses, a workload whose trials record it
(a new knob fails first here: give it a line)."""

_FRONT_GRAMMAR: TextGrammar = (lambda text: text.split(","), lambda item: _topology(item))


def _topology(item: str) -> str:
    if item.strip() not in TOPOLOGIES:
        raise UserError(f"front: {item.strip()!r} is not one of {', '.join(TOPOLOGIES)}")
    return item.strip()


FRONT = Knob("front", "topology", Kind.TEXT, lambda v: None if v == "direct" else f"fronted by {v}", "front",
             unset="direct", grammar=_FRONT_GRAMMAR)
"""A throwaway knob over a field already recorded and compared (`--topology`) but not swept."""


def _declared(knob: Knob, sweep: tuple[str, str, str]) -> Iterator[Knob]:
    """A throwaway knob registered, with its SWEEPS line, for one test."""
    register_knob(knob)
    SWEEPS[knob.name] = sweep
    try:
        yield knob
    finally:
        withdraw_knob(knob)
        del SWEEPS[knob.name]


@pytest.fixture()
def front() -> Iterator[Knob]:
    yield from _declared(FRONT, ("direct,nginx", "carrier-pigeon", "hello"))


@pytest.fixture()
def spin() -> Iterator[Knob]:
    yield from _declared(SPIN, ("0,30000", "-1", "hello"))


def recipe_problems(knob: Knob, tmp: Path) -> list[str]:
    """Where this knob does not get to: its field, its grammar, a planned sweep, words, columns, axis."""
    problems = _fields(knob)
    if knob.name not in SWEEPS:
        return [*problems, f"{knob.name}: give SWEEPS a line (two values, a bad one, a workload)"]
    good, bad, workload = SWEEPS[knob.name]
    if knob.field is None:
        problems += fieldless_problems(knob, good.split(",")[-1], bad, tmp / "layers")
    try:
        axis = parse_knob(f"{knob.name}={good}")
    except UserError as exc:
        return [*problems, f"{knob.name}: the sweep grammar refuses {good!r}: {exc}"]
    try:
        parse_knob(f"{knob.name}={bad}")
        problems.append(f"{knob.name}: the sweep grammar takes {bad!r}")
    except UserError as exc:
        if "\n" in str(exc) or knob.name not in str(exc):
            problems.append(f"{knob.name}: refusing {bad!r} is not one line naming the knob: {exc}")
    points = [tuple(p.overrides().items()) for p in grid([axis])]
    # gthread: a threaded stack, so its trials record threads too
    options = RunOptions(stacks=("flask:gunicorn-gthread",), workloads=(workload,), repeats=1, seed=1)
    try:
        specs = make_plan(build_catalog(), options, (0, 1, 2, 3), points).trials
    except TypeError as exc:  # a point's key that is neither a field nor a field-less knob
        return [*problems, f"{knob.name}: the plan cannot set it (plan/sessions.py): {exc}"]
    if len({knob.setting(s) for s in specs}) != 2 or len({s.cell for s in specs}) != 2:
        problems.append(f"{knob.name}: the planned trials do not record and compare its two values (plan/sessions.py)")
    return problems + _applied(knob, specs) + _said(knob, specs) + _columns(knob, specs, tmp) + _axis(knob, specs)


def _applied(knob: Knob, specs: tuple[TrialSpec, ...]) -> list[str]:
    """A field-less knob's declared app environment is in each planned trial's app_env (what the
    launchers give the server); a knob with a field applies through its own code."""
    if knob.applies is None:
        return []
    if any(dict(s.app_env).get(knob.applies.variable) != str(knob.setting(s)) for s in specs):
        return [f"{knob.name}: the planned trials do not give the server {knob.applies.variable} (plan/sessions.py)"]
    return []


def _fields(knob: Knob) -> list[str]:
    if knob.field is None:  # its value is in `knobs` by name, its flag derived from it
        options = {o.field for o in all_options()}
        missing = [] if KNOB_FIELD + knob.name in options else \
            [f"{knob.name}: plan/declared.all_options derives no flag for it"]
        if knob.name in {f.name for f in dataclasses.fields(RunOptions)}:
            missing.append(f"{knob.name}: its name is a RunOptions field: a sweep point could not tell them apart")
        return missing
    places = {"RunOptions (plan/options.py)": {f.name for f in dataclasses.fields(RunOptions)},
              "plan/declared.OPTIONS": {o.field for o in OPTIONS},
              "results/model.TrialSpec": {f.name for f in dataclasses.fields(TrialSpec)},
              "results/model.Cell": set(Cell._fields)}
    return [f"{knob.name}: no field {knob.field} in {place}"
            for place, fields in places.items() if knob.field not in fields]


def _said(knob: Knob, specs: tuple[TrialSpec, ...]) -> list[str]:
    words = [w for s in specs if (w := knob.words(knob.setting(s))) is not None]
    missing = [w for s in specs if (w := knob.words(knob.setting(s))) is not None and w not in knob_labels(s)]
    return [f"{knob.name}: plan/knobs.knob_labels does not say {missing}"] if missing or not words else []


def _columns(knob: Knob, specs: tuple[TrialSpec, ...], tmp: Path) -> list[str]:
    writer = ResultsWriter(results_path(tmp), header())
    for spec in specs:
        ran = stack(spec.stack_id)  # a stack records its own worker and thread counts: as asked here
        if knob.field is not None and hasattr(ran, knob.field) and getattr(spec, knob.field) is not None:
            ran = dataclasses.replace(ran, **{knob.field: getattr(spec, knob.field)})
        writer.add_trial(TrialResult(spec, ran, TrialStatus.OK, "2026-11-21T00:00:00+00:00",
                                     "2026-11-21T00:00:03+00:00", load=synthetic_result(1000.0, 2.0), keepalive=True))
    writer.finish("complete")
    writer.close()
    if {t.spec.cell for t in load_results(tmp).trials} != {s.cell for s in specs}:
        return [f"{knob.name}: the results file does not keep its values (results/store.py, TrialSpec)"]
    csv_header = renderer("csv")(load_results(tmp)).splitlines()[0].split(",")
    json_rows = json.loads(renderer("json")(load_results(tmp)))["rows"]
    shown = {row.get(knob.column) for row in json_rows}
    if knob.column not in csv_header or knob.column not in record.knob_columns() or len(shown) != 2:
        return [f"{knob.name}: no column {knob.column} with its values in the CSV and JSON (report/record.py)"]
    return []


def _axis(knob: Knob, specs: tuple[TrialSpec, ...]) -> list[str]:
    axis = next((a for a in html_charts.axes() if a.field == knob.key), None)
    if axis is None or axis.title != knob.axis:
        return [f"{knob.name}: no chart axis {knob.axis!r} in report/html_charts.axes()"]
    placed = {axis.value(s) for s in specs} - {None}
    if len(placed) < (1 if knob.auto else 2) or len({axis.blank(s).cell for s in specs}) != 1:
        return [f"{knob.name}: report/html_charts.axes() does not place the planned points apart, "
                "or its blank does not put them in one chart"]
    return []


def test_every_declared_knob_reaches_every_place(tmp_path: Path) -> None:
    for knob in declared_knobs():
        assert recipe_problems(knob, tmp_path / knob.name) == []


def test_a_knob_registered_by_one_declaration_reaches_every_place(front: Knob, tmp_path: Path) -> None:
    assert recipe_problems(front, tmp_path) == []
    assert sweep.knob_named("front") is front and "front" in sweep.known_knobs()
    with pytest.raises(UserError, match=r"^front: 'carrier-pigeon' is not one of direct, nginx, netns$"):
        parse_knob("front=direct,carrier-pigeon")


def test_a_knob_without_a_field_reaches_every_place_from_one_registration(spin: Knob, tmp_path: Path) -> None:
    assert recipe_problems(spin, tmp_path) == []
    with pytest.raises(UserError, match=r"^spin_loops must not be negative, got -1$"):
        parse_knob("spin_loops=0,-1")
    stored = json.loads(results_path(tmp_path).read_text().splitlines()[-2])  # the last trial record
    assert stored["spec"]["knobs"] == {"spin_loops": 30000}  # an object in the file
    assert "`--spin-loops`" in declared.reference_table()


def test_a_knob_without_a_field_says_how_it_applies() -> None:
    with pytest.raises(ValueError, match="says how it applies"):
        register_knob(dataclasses.replace(SPIN, applies=None))
    with pytest.raises(ValueError, match="says how it applies"):
        register_knob(dataclasses.replace(SPIN, field="connections_x"))
    assert "spin_loops" not in sweep.known_knobs()


def _without(knob: Knob) -> Callable[[], tuple[Knob, ...]]:
    return lambda: tuple(k for k in declared_knobs() if k is not knob)


@pytest.mark.parametrize(("place", "name", "says"), [
    (sweep, "declared_knobs", "the sweep grammar"), (knob_words, "declared_knobs", "knob_labels"),
    (record, "declared_knobs", "report/record.py"), (html_charts, "declared_knobs", "html_charts.axes()"),
    (declared, "fieldless_knobs", "plan/declared"), (sessions, "fieldless_knobs", "plan/sessions.py"),
])
def test_the_recipe_check_fails_when_one_place_drops_the_knob_without_a_field(
        spin: Knob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: object, name: str, says: str) -> None:
    monkeypatch.setattr(place, name, _without(spin) if name == "declared_knobs" else lambda: ())
    problems = recipe_problems(spin, tmp_path)
    assert problems and any(says in p for p in problems), problems


def test_the_recipe_check_fails_when_the_plan_does_not_apply_the_knob(
        spin: Knob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "applied_env", lambda knobs: ())
    assert recipe_problems(spin, tmp_path) == [
        "spin_loops: the planned trials do not give the server PWB_EXTRA_WORK_LOOPS (plan/sessions.py)"]


@pytest.mark.parametrize(("place", "says"), [
    (sweep, "the sweep grammar"), (knob_words, "knob_labels"), (record, "report/record.py"),
    (html_charts, "html_charts.axes()"),
])
def test_the_recipe_check_fails_when_one_place_drops_the_knob(
        front: Knob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, place: object, says: str) -> None:
    monkeypatch.setattr(place, "declared_knobs", _without(front))
    problems = recipe_problems(front, tmp_path)
    assert problems and all(says in p for p in problems), problems


def test_the_recipe_check_fails_when_the_plan_does_not_record_the_knob(
        front: Knob, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = sessions.knobs_for
    monkeypatch.setattr(sessions, "knobs_for", lambda w, o: {k: v for k, v in real(w, o).items() if k != "topology"})
    problems = recipe_problems(front, tmp_path)
    assert problems and "plan/sessions.py" in problems[0], problems


def test_the_recipe_check_fails_for_a_knob_without_a_field_or_a_sweep_line(tmp_path: Path) -> None:
    orphan = Knob("orphan", "no_such_field", Kind.COUNT, str, "orphan")
    assert recipe_problems(orphan, tmp_path) == [
        f"orphan: no field no_such_field in {place}" for place in
        ("RunOptions (plan/options.py)", "plan/declared.OPTIONS", "results/model.TrialSpec", "results/model.Cell")
    ] + ["orphan: give SWEEPS a line (two values, a bad one, a workload)"]


def test_every_generator_is_named_made_and_checked_before_a_run() -> None:
    tools = {r.name for r in check()}
    assert set(GENERATOR_NAMES) == set(GENERATORS)
    for name in GENERATOR_NAMES:
        assert GENERATORS[name]().name == name
        assert name in tools, f"{name}: stage/doctor.check has no requirement for it"
