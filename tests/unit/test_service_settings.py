"""The backing services take their settings from the run's options, through one view
(RunOptions.services): no second list of defaults to drift from the options'."""

from __future__ import annotations

import typing
from dataclasses import fields

from pywebbench.catalog.registry import build_catalog
from pywebbench.catalog.workloads import Needs
from pywebbench.plan.options import RunOptions, ServiceSettings
from pywebbench.plan.sessions import make_plan
from pywebbench.services.backing import BackingConfig, backing_config

CATALOG = build_catalog()


def test_every_service_setting_is_the_option_of_the_same_name_and_type() -> None:
    options = typing.get_type_hints(RunOptions)
    for name, kind in typing.get_type_hints(ServiceSettings).items():
        assert options[name] == kind, name


def test_the_services_view_carries_the_options_values() -> None:
    options = RunOptions(max_db_sessions=7, db_delay_s=0.003, db_rows=2_000, db_pool=4, upstream_delay_s=0.01,
                         upstream_size=64, cpu_size=500, db="sqlite", workloads=("posts",))
    settings = options.services
    assert {f.name: getattr(settings, f.name) for f in fields(settings)} == {
        "max_db_sessions": 7, "db_delay_s": 0.003, "db_rows": 2_000, "db_pool": 4, "upstream_delay_s": 0.01,
        "upstream_size": 64, "cpu_size": 500, "db": "sqlite"}
    assert BackingConfig(frozenset()).settings == RunOptions().services  # the defaults are the options'


def test_a_plan_sets_what_starts_and_how_many_lanes() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync", "starlette:uvicorn"), workloads=("db",), max_db_sessions=20,
                         method="duet")
    points = (((("max_db_sessions", 40),)), ((("max_db_sessions", 80),)))
    plan = make_plan(CATALOG, options, (0, 1), points)
    config = backing_config(plan, options, points)
    assert config.settings == options.services
    assert Needs.DATABASE in config.needs and Needs.UPSTREAM not in config.needs
    assert config.postgres_sessions == 80  # the sweep's highest cap lifts PostgreSQL's own limit
    assert (config.lanes, config.loaded_at_once) == (2, 2)
    assert config.cpus == plan.split.loadgen and not config.go_reference


def test_the_restart_method_runs_one_lane() -> None:
    options = RunOptions(stacks=("flask:gunicorn-sync", "starlette:uvicorn"), workloads=("hello",), method="restart")
    plan = make_plan(CATALOG, options, (0, 1))
    config = backing_config(plan, options, ())
    assert (config.lanes, config.loaded_at_once, config.postgres_sessions) == (1, 1, None)
    assert config.needs == frozenset()
