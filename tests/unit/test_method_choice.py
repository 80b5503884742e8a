"""--method auto: duet for workloads that keep the stacks on the CPU, interleaved for those that wait."""

from __future__ import annotations

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.plan.method_choice import choose_method
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
    (("hello", "db"), "db waits on PostgreSQL"),
    (("upstream",), "upstream waits on the upstream"),
])
def test_a_workload_that_waits_makes_the_run_interleaved(workloads: tuple[str, ...], said: str) -> None:
    method, line = _choose(workloads=workloads)
    assert method is Method.INTERLEAVED and said in line and "measure the wait" in line


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
