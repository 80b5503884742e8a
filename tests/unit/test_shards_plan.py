"""Planning a sharded run: the blocks, the fleet's shards, the refusals, a shard's own options."""

from __future__ import annotations

import tomllib
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.hosts import Role, parse_inventory
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_sources
from pywebbench.plan.shards import (
    check_shards,
    fleet_shards,
    options_toml,
    plan_shards,
    shard_inventory_toml,
    shard_options,
)

BASE = "flask:gunicorn-sync"
FLEET = {"hosts": {
    "g1": {"address": "10.0.0.2", "roles": ["generator"], "shard": 1},
    "a1": {"address": "10.0.0.3", "roles": ["app", "db"], "shard": 1, "user": "bench"},
    "g2": {"address": "10.0.1.2", "roles": ["generator"], "shard": 2},
    "a2": {"address": "10.0.1.3", "roles": ["app"], "shard": 2},
}}


def test_every_shard_gets_the_baseline_and_the_overlap_and_the_rest_is_dealt() -> None:
    plan = plan_shards([BASE, "a", "b", "c", "d", "e"], BASE, 2)
    assert plan.overlap == ("a", "b")
    assert [s.own for s in plan.shards] == [("c", "e"), ("d",)]
    assert plan.shards[0].stacks == (BASE, "a", "b", "c", "e")
    every = {s for shard in plan.shards for s in shard.own}
    assert every == {"c", "d", "e"}  # each block stack measured once


def test_too_few_stacks_for_the_shards_is_one_line() -> None:
    with pytest.raises(UserError, match="too few"):
        plan_shards([BASE, "a", "b", "c"], BASE, 2)


@pytest.mark.parametrize(("options", "says"), [
    (RunOptions(shards=1, topology="netns"), "2 or more"),
    (RunOptions(shards=2), "own hosts"),
    (RunOptions(shards=2, topology="netns", method="restart"), "--method interleaved"),  # type: ignore[arg-type]
    (RunOptions(shards=2, topology="netns", allocation="adaptive", budget_s=60), "adaptive"),
])
def test_bad_sharded_options_are_refused(options: RunOptions, says: str) -> None:
    with pytest.raises(UserError, match=says):
        check_shards(options.validate(), ())


def test_a_sweep_is_refused_and_plain_options_pass() -> None:
    with pytest.raises(UserError, match="knobs"):
        check_shards(RunOptions(shards=2, topology="netns"), ("connections=10,100",))
    check_shards(RunOptions(shards=2, topology="netns"), ())
    check_shards(RunOptions(), ("connections=10",))  # no shards: nothing to check


def test_a_fleet_checks_roles_per_shard_and_splits_into_plain_inventories() -> None:
    inventory = parse_inventory(FLEET)
    groups = fleet_shards(inventory, 2, "fleet.toml")
    assert [h.name for h in groups[2].hosts] == ["g2", "a2"]
    text = shard_inventory_toml(FLEET, 1)
    data = tomllib.loads(text)
    assert set(data["hosts"]) == {"g1", "a1"} and "shard" not in data["hosts"]["a1"]
    assert parse_inventory(data).host_of(Role.APP).name == "a1"
    with pytest.raises(UserError, match="shards 1..3"):
        fleet_shards(inventory, 3, "fleet.toml")


def test_a_fleet_shard_without_an_app_host_or_a_host_without_a_shard_is_refused() -> None:
    broken = {"hosts": {**FLEET["hosts"], "a2": {"address": "10.0.1.3", "roles": ["db"], "shard": 2}}}
    with pytest.raises(UserError, match="shard 2: no host takes the app role"):
        parse_inventory(broken)
    mixed = {"hosts": {**FLEET["hosts"], "x": {"address": "10.0.2.2", "roles": ["upstream"]}}}
    with pytest.raises(UserError, match="give every host one or none"):
        parse_inventory(mixed)
    unsharded = parse_inventory({"hosts": {"a": {"address": "10.0.0.3", "roles": ["app", "generator"]}}})
    with pytest.raises(UserError, match="name its shard"):
        fleet_shards(unsharded, 2, "hosts.toml")


def test_a_shard_reads_back_the_parent_options_with_its_own_stacks_hosts_and_directory(tmp_path: Path) -> None:
    parent = RunOptions(stacks=(BASE, "a", "b", "c", "d"), workloads=("hello", "cpu"), shards=2, hosts="fleet.toml",
                        duration_s=2.5, budget_s=600, precision=0.02, launch_block=3, rounds_per_launch=1,
                        workload_requests=(("hello", 500),), equivalence=0.03).validate()
    shard = plan_shards(list(parent.stacks), BASE, 2).shards[1]
    config = tmp_path / "options.toml"
    config.write_text(options_toml(shard_options(parent, shard, tmp_path / "shard-2", tmp_path / "hosts.toml")))
    child = from_sources(config_file=config, environ={}, flags={})
    assert child == replace(parent, stacks=shard.stacks, shards=None, out_dir=tmp_path / "shard-2",
                            hosts=str(tmp_path / "hosts.toml"))
