"""`run --shards N`: the stacks split into blocks, each measured by its own shard of hosts at once.

Every shard runs the baseline and the same overlap stacks beside its own block, so each of its
ratios is to the baseline in its own rounds, and the overlap stacks, measured by every shard,
show how far the shards' hosts move a ratio (analyze/shards.py turns that into a host term every
interval carries). A shard is a whole inventory: with `--hosts`, the fleet's hosts carry
`shard = 1..N` (plan/hosts.py); with `--topology netns`, each shard makes its own rig.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import tomli_w

from pywebbench.core.errors import UserError
from pywebbench.plan.hosts import Inventory
from pywebbench.plan.options import RunOptions
from pywebbench.results.methods import strategy_of

OVERLAP_STACKS = 2
"""Stacks every shard measures besides the baseline: with two, each shard past the first gives the
host term two degrees of freedom."""


@dataclass(frozen=True)
class Shard:
    number: int
    stacks: tuple[str, ...]
    """The baseline, the overlap stacks, then the shard's own block."""
    own: tuple[str, ...]


@dataclass(frozen=True)
class ShardPlan:
    baseline: str
    overlap: tuple[str, ...]
    shards: tuple[Shard, ...]


def check_shards(options: RunOptions, knobs: Sequence[str]) -> None:
    """A sharded run's options, refused in one line before anything starts."""
    count = options.shards
    if count is None:
        return
    if count < 2:
        raise UserError(f"--shards splits the stacks across several shards of hosts: give 2 or more, got {count}")
    if not options.placed:
        raise UserError("--shards runs each block on its own hosts: give --hosts with a fleet whose hosts name "
                        "their shard, or --topology netns (a rig for each shard on this machine)")
    if not strategy_of(options.method).shardable:
        raise UserError("--shards chains the shards' ratios through the baseline in their own rounds: it needs "
                        "--method interleaved")
    if knobs:
        raise UserError("--shards runs one plan on every shard; a sweep's knobs (or a preset's grid) are not "
                        "supported with it: run the shards once per point")
    if options.allocation == "adaptive":
        raise UserError("--shards with --allocation adaptive is not supported: each shard would drop its own "
                        "overlap stacks once placed, and the host term needs them in every shard")


def plan_shards(stacks: Sequence[str], baseline: str, count: int) -> ShardPlan:
    """The baseline and the first two other stacks (in the run's order) in every shard, the rest
    dealt in turn, so the blocks differ in size by one at most."""
    others = [s for s in dict.fromkeys(stacks) if s != baseline]
    if len(others) < OVERLAP_STACKS + count:
        raise UserError(f"--shards {count} needs the baseline, {OVERLAP_STACKS} overlap stacks and at least one "
                        f"stack of its own for every shard: {len(others)} stacks besides the baseline are too few")
    overlap = tuple(others[:OVERLAP_STACKS])
    rest = others[OVERLAP_STACKS:]
    shards = []
    for index in range(count):
        own = tuple(rest[index::count])
        shards.append(Shard(index + 1, (baseline, *overlap, *own), own))
    return ShardPlan(baseline, overlap, tuple(shards))


def fleet_shards(inventory: Inventory, count: int, source: str) -> dict[int, Inventory]:
    """The fleet's hosts by shard, 1..count each present, or a one-line refusal."""
    groups = inventory.shards()
    if None in groups:
        raise UserError(f"{source}: --shards {count} needs every host to name its shard (shard = 1..{count})")
    numbers = sorted(n for n in groups if n is not None)
    if numbers != list(range(1, count + 1)):
        raise UserError(f"{source}: --shards {count} needs shards 1..{count}; the hosts name {numbers}")
    return {n: groups[n] for n in numbers}


def shard_inventory_toml(data: Mapping[str, Any], number: int) -> str:
    """The fleet file's tables of one shard, without their shard key: an ordinary inventory."""
    tables = data.get("hosts", {})
    kept = {name: {k: v for k, v in table.items() if k != "shard"}
            for name, table in tables.items() if isinstance(table, dict) and table.get("shard") == number}
    return tomli_w.dumps({"hosts": kept})


def shard_options(options: RunOptions, shard: Shard, out_dir: Path, hosts: Path | None) -> RunOptions:
    """What one shard's run is given: its stacks, its hosts (or its own rig), its directory."""
    return replace(options, stacks=shard.stacks, shards=None, out_dir=out_dir,
                   hosts=str(hosts) if hosts is not None else None)


def options_toml(options: RunOptions) -> str:
    """The options as a config file `run --config` reads back (sources.from_sources)."""
    data = {name: _plain(value) for name, value in options.to_json().items() if value is not None}
    return tomli_w.dumps({"run": data})


def _plain(value: Any) -> Any:
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)  # an enum's value, not the enum (tomli_w wants plain types)
    if isinstance(value, Path):
        return str(value)
    return value
