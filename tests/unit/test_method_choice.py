"""--method auto: duet for workloads that keep the stacks on the CPU, interleaved for those that wait."""

from __future__ import annotations

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.plan.method_choice import MethodPart, choose_method, choose_methods
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan
from pywebbench.results.model import Method

CATALOG = build_catalog()
TWO = ("flask:gunicorn-sync", "starlette:uvicorn")


def _choose(tuning: bool = False, **fields: object) -> tuple[Method, str]:
    options = RunOptions(**{"stacks": TWO, "method": "auto", **fields}).validate()  # type: ignore[arg-type]
    return choose_method(options, make_plan(CATALOG, options, (0, 1)), tuning=tuning)


def test_cpu_bound_workloads_get_the_duet() -> None:
    method, line = _choose(workloads=("hello", "cpu"))
    assert method is Method.DUET
    assert line.startswith("--method auto: duet (cpu, hello keep the stacks on the CPU")


@pytest.mark.parametrize(("workloads", "said"), [
    (("db",), "db waits on PostgreSQL"),
    (("upstream",), "upstream waits on the upstream"),
])
def test_a_run_of_workloads_that_wait_is_interleaved(workloads: tuple[str, ...], said: str) -> None:
    method, line = _choose(workloads=workloads)
    assert method is Method.INTERLEAVED and said in line and "measure the wait" in line


def _parts(**fields: object) -> tuple[tuple[MethodPart, ...], str]:
    options = RunOptions(**{"stacks": TWO, "method": "auto", **fields}).validate()  # type: ignore[arg-type]
    return choose_methods(options, make_plan(CATALOG, options, (0, 1)))


def test_auto_measures_each_workload_by_its_own_method_when_some_wait_and_some_compute() -> None:
    parts, line = _parts(workloads=("hello", "db", "cpu", "upstream"))
    assert parts == (MethodPart(Method.DUET, ("hello", "cpu")), MethodPart(Method.INTERLEAVED, ("db", "upstream")))
    assert line.startswith("--method auto: duet for hello, cpu (on the CPU), then interleaved for db, upstream")
    assert "db waits on PostgreSQL" in line and "labelled with its method" in line


@pytest.mark.parametrize(("fields", "method"), [
    ({"workloads": ("hello", "cpu")}, Method.DUET),
    ({"workloads": ("db",)}, Method.INTERLEAVED),
    ({"workloads": ("hello", "db"), "allocation": "adaptive", "budget_s": 60.0}, Method.INTERLEAVED),
    ({"workloads": ("hello", "db"), "method": "duet"}, Method.DUET),
])
def test_one_part_when_one_method_serves_every_workload(fields: dict[str, object], method: Method) -> None:
    parts, _ = _parts(**fields)
    assert len(parts) == 1 and parts[0].method is method


@pytest.mark.parametrize(("tuning", "fields", "said"), [
    (True, {}, "the tuning engine"),
    (False, {"allocation": "adaptive", "budget_s": 60.0}, "--allocation adaptive"),
    (False, {"topology": "netns"}, "this machine's CPUs"),
    (False, {"stacks": ("flask:gunicorn-sync",)}, "needs two stacks"),
])
def test_what_a_duet_cannot_do_makes_auto_interleaved(tuning: bool, fields: dict[str, object], said: str) -> None:
    method, line = _choose(tuning, workloads=("hello",), **fields)
    assert method is Method.INTERLEAVED and said in line


def test_a_method_asked_for_is_kept_without_a_word() -> None:
    options = RunOptions(stacks=TWO, method="restart").validate()  # type: ignore[arg-type]
    assert choose_method(options, make_plan(CATALOG, options, (0, 1))) == (Method.RESTART, "")
