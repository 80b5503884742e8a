"""Sweep planning: grid points become sessions, knobs reach the trials, resume skips what is done."""

from __future__ import annotations

from collections import Counter

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import _missing_only, points_of
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import cpus_for, make_plan
from pywebbench.plan.options import CpuSplit

CATALOG = build_catalog()
STACKS = ("flask:gunicorn-sync", "starlette:uvicorn")


def test_a_grid_of_two_knobs_plans_every_point_for_every_stack_and_round() -> None:
    points = points_of(["connections=10,100", "db_delay=0,20ms"])
    assert len(points) == 4
    options = RunOptions(stacks=STACKS, workloads=("db",), repeats=2, seed=3)
    plan = make_plan(CATALOG, options, (0, 1), points)
    assert len(plan.trials) == 2 * 4 * 2
    seen = Counter((t.stack_id, t.connections, t.db_delay_s) for t in plan.trials)
    assert set(seen.values()) == {2}  # each stack x point once per round
    assert {(c, d) for _, c, d in seen} == {(10, 0.0), (10, 0.02), (100, 0.0), (100, 0.02)}
    assert len({t.trial_id for t in plan.trials}) == len(plan.trials)
    # each point's stacks stay together, so a service restarts once per point and round
    order = [(s.round, s.point) for s in plan.sessions]
    assert len([k for i, k in enumerate(order) if i == 0 or order[i - 1] != k]) == 2 * 4


def test_threads_axis_does_not_multiply_stacks_without_threads() -> None:
    options = RunOptions(stacks=("flask:gunicorn-gthread", "aiohttp:aiohttp"), workloads=("hello",), seed=1, repeats=1)
    plan = make_plan(CATALOG, options, (0, 1), points_of(["threads=10,100,1000"]))
    per_stack = Counter(t.stack_id for t in plan.trials)
    assert per_stack == {"flask:gunicorn-gthread": 3, "aiohttp:aiohttp": 1}
    assert sorted(s.threads for s in plan.sessions if s.stack.id == "flask:gunicorn-gthread") == [10, 100, 1000]


def test_stack_cpus_knob_gives_the_stack_k_cpus_and_workers_follow() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync",), seed=1)
    plan = make_plan(CATALOG, options, (0, 1), points_of(["stack_cpus=1,2"]))
    by_cpus = {len(s.stack_cpus): s for s in plan.sessions}
    assert by_cpus[1].stack_cpus == (1,) and by_cpus[2].stack_cpus == (0, 1)
    assert (by_cpus[1].workers, by_cpus[2].workers) == (3, 5)  # seed 000's 2 x CPUs + 1
    assert cpus_for(1, CpuSplit((1,), (0,)), (0, 1)) == (1,)
    with pytest.raises(UserError, match="usable CPUs"):
        cpus_for(3, CpuSplit((1,), (0,)), (0, 1))


def test_workers_per_cpu_and_per_workload_requests_apply() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync", "flask:waitress"), workloads=("hello", "api"),
                         generator="ab", requests=1000, workers_per_cpu=3, workload_requests=(("api", 100),),
                         seed=1)
    plan = make_plan(CATALOG, options, (0, 1), points_of(["stack_cpus=1,2"]))
    gunicorn = {len(s.stack_cpus): s.workers for s in plan.sessions if s.stack.id == "flask:gunicorn-sync"}
    assert gunicorn == {1: 3, 2: 6}
    assert {s.workers for s in plan.sessions if s.stack.id == "flask:waitress"} == {1}  # single process
    assert {(t.workload, t.requests) for t in plan.trials} == {("hello", 1000), ("api", 100)}


def test_resume_keeps_only_the_trials_not_yet_recorded() -> None:
    options = RunOptions(stacks=STACKS, workloads=("hello", "cpu"), repeats=2, seed=11)
    plan = make_plan(CATALOG, options, (0, 1))
    done = {t.trial_id for t in plan.trials[:5]}
    rest = _missing_only(plan, done)
    assert [t.trial_id for t in rest.trials] == [t.trial_id for t in plan.trials[5:]]
    for session in rest.sessions:
        assert [w.name for w in session.workloads] == [t.workload for t in session.trials]
    # the same options and seed give the same trial ids, which is what resume relies on
    again = make_plan(CATALOG, options, (0, 1))
    assert [t.trial_id for t in again.trials] == [t.trial_id for t in plan.trials]


def test_open_loop_rates_are_a_knob_and_need_oha() -> None:
    with pytest.raises(UserError, match="needs --generator oha"):
        RunOptions(rate=1000.0).validate()
    options = RunOptions(stacks=STACKS, generator="oha", seed=1)
    plan = make_plan(CATALOG, options, (0, 1), points_of(["rate=500,1000"]))
    assert sorted({t.rate for t in plan.trials}) == [500.0, 1000.0]
