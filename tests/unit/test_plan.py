from dataclasses import replace

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import make_plan, select_stacks

CATALOG = build_catalog()


def test_globs_select_in_catalog_order() -> None:
    stacks, _ = select_stacks(CATALOG, ("flask:gunicorn-*",))
    ids = [s.id for s in stacks]
    assert ids[0] == "flask:gunicorn-sync"
    assert "flask:gunicorn-gevent" in ids and all(i.startswith("flask:gunicorn-") for i in ids)


def test_a_bare_glob_matches_whole_ids_so_star_is_the_catalog() -> None:
    every, skipped = select_stacks(CATALOG, ("*",))
    assert len(every) + len(skipped) == len(CATALOG.stacks)
    assert {s.id for s in select_stacks(CATALOG, ("*bjoern",))[0]} == {
        s.id for s in CATALOG.stacks if s.id.endswith(":bjoern") and not s.unavailable}


def test_bad_patterns_are_refused() -> None:
    with pytest.raises(UserError, match="FRAMEWORK:SERVER"):
        select_stacks(CATALOG, ("flask",))
    with pytest.raises(UserError, match="no stack matches"):
        select_stacks(CATALOG, ("nothing:*",))


def test_plan_counts_workers_from_stack_cpus() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync", "starlette:uvicorn", "flask:gunicorn-gthread"))
    plan = make_plan(CATALOG, options, (0, 1, 2, 3))
    by_id = {s.stack.id: s for s in plan.sessions}
    assert plan.split.loadgen == (0,) and plan.split.stack == (1, 2, 3)
    assert by_id["flask:gunicorn-sync"].workers == 7
    assert by_id["starlette:uvicorn"].workers == 3
    assert by_id["flask:gunicorn-gthread"].threads == options.default_threads
    assert by_id["flask:gunicorn-sync"].threads == 1
    assert all(t.loadgen_cpus == (0,) for t in plan.trials)


def test_explicit_counts_win() -> None:
    plan = make_plan(CATALOG, RunOptions(stacks=("flask:gunicorn-gthread",), workers=2, threads=40), (0, 1))
    assert (plan.sessions[0].workers, plan.sessions[0].threads) == (2, 40)


def test_rounds_reshuffle_and_cover_every_stack() -> None:
    stacks = ("flask:gunicorn-sync", "starlette:uvicorn", "bottle:bjoern", "falcon:gunicorn-sync")
    plan = make_plan(CATALOG, RunOptions(stacks=stacks, repeats=4, seed=7), (0, 1))
    rounds = [[s.stack.id for s in plan.sessions if s.round == r] for r in range(1, 5)]
    assert all(sorted(r) == sorted(stacks) for r in rounds)
    assert len({tuple(r) for r in rounds}) > 1
    again = make_plan(CATALOG, RunOptions(stacks=stacks, repeats=4, seed=7), (0, 1))
    assert [s.stack.id for s in again.sessions] == [s.stack.id for s in plan.sessions]


def test_unknown_workload_is_refused() -> None:
    with pytest.raises(UserError, match="unknown workload"):
        make_plan(CATALOG, RunOptions(stacks=("flask:gunicorn-sync",), workloads=("nope",)), (0, 1))


def test_app_pools_holding_more_sessions_than_the_cap_are_refused_before_anything_starts() -> None:
    # 3 gthread workers (one stack CPU) x a pool of 2 = 6 sessions held for life, against a cap of 3
    options = RunOptions(stacks=("flask:gunicorn-gthread",), workloads=("db",), db_pool=2, max_db_sessions=3)
    with pytest.raises(UserError, match=r"3 worker\(s\) x --db-pool 2 hold 6 database sessions, over --max-db-sessions 3"):
        make_plan(CATALOG, options, (0, 1))
    # one each fits exactly; and a workload without a database never counts the pool
    assert make_plan(CATALOG, replace(options, db_pool=1), (0, 1)).sessions
    assert make_plan(CATALOG, replace(options, workloads=("hello",)), (0, 1)).sessions
