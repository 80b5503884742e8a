"""`run --shards N`: each shard's run started at once as a child `pywebbench run`, then chained.

Every shard is an ordinary run in a directory of its own (`shard-K/`: its options, its
inventory, its results, resumable on its own), in a process group of its own. Ctrl-C (or TERM)
reaches each shard as an interruption, so each keeps every finished window and stops what it
started; should this process be killed, the run guard (core/orphans.py) stops the shards' groups.
When all have ended, analyze/shards.py chains their ratios and `shards.json` and `shards.md`
hold the result (schema SCHEMA_VERSION).
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
from collections.abc import Callable
from dataclasses import asdict
from datetime import datetime
from pathlib import Path
from typing import Any

from pywebbench.core import orphans
from pywebbench.analyze.shards import ShardedRun, chain
from pywebbench.catalog.registry import BASELINE_STACK, Catalog
from pywebbench.plan.hosts import parse_inventory, read_inventory
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import choose_stacks
from pywebbench.plan.shards import (
    ShardPlan,
    check_shards,
    fleet_shards,
    options_toml,
    plan_shards,
    shard_inventory_toml,
    shard_options,
)
from pywebbench.core.procs import ManagedProcess, stop_signals, tail
from pywebbench.report.shards import render_sharded
from pywebbench.results.store import load_results, results_path
from pywebbench.stage.envs import cache_root

STOP_GRACE_S = 180.0
"""A shard told to stop writes its last window and stops its servers and services: give it time."""
POLL_S = 2.0
SAY_EVERY_S = 60.0


def run_sharded(options: RunOptions, catalog: Catalog, knobs: tuple[str, ...],
                say: Callable[[str], None]) -> tuple[int, Path]:
    """Every shard run at once, then chained; (exit code, directory)."""
    check_shards(options, knobs)
    assert options.shards is not None
    stacks, skipped = choose_stacks(catalog, options)
    for stack_id, why in skipped:
        say(f"{stack_id}: left out ({why})")
    plan = plan_shards([BASELINE_STACK, *(s.id for s in stacks)], BASELINE_STACK, options.shards)
    inventories = _fleet(options, plan)
    run_dir = (options.out_dir or Path("runs") / datetime.now().strftime("%Y%m%d-%H%M%S-shards")).resolve()
    run_dir.mkdir(parents=True, exist_ok=True)
    children = []
    for shard in plan.shards:
        where = run_dir / f"shard-{shard.number}"
        where.mkdir(exist_ok=True)
        hosts = None
        if inventories is not None:
            hosts = where / "hosts.toml"
            hosts.write_text(inventories[shard.number])
        config = where / "options.toml"
        config.write_text(options_toml(shard_options(options, shard, where, hosts)))
        say(f"shard {shard.number}: {len(shard.stacks)} stacks ({', '.join(shard.own)} and the baseline and "
            f"overlap {', '.join(plan.overlap)}) -> {where}")
        started = results_path(where).exists()
        if started and load_results(where).complete:
            say(f"shard {shard.number}: complete in {where}, kept")
            continue
        how = ["--resume", str(where)] if started else ["--config", str(config)]
        children.append(ManagedProcess([sys.executable, "-m", "pywebbench", "run", *how], env=dict(os.environ),
                                       log_dir=where, name=f"shard-{shard.number}", grace_s=STOP_GRACE_S))
    codes = _run_all(children, run_dir, say) if children else []
    failed = [(child, code) for child, code in zip(children, codes) if code not in (0, 1)]
    for child, code in failed:
        say(f"{child.name} ended with exit {code}: {_last_line(child)}")
    if failed:
        return failed[0][1], run_dir
    merged = chain({shard.number: load_results(run_dir / f"shard-{shard.number}") for shard in plan.shards},
                   plan.baseline, options.equivalence)
    write_merged(merged, run_dir)
    return max(codes, default=0), run_dir


def _fleet(options: RunOptions, plan: ShardPlan) -> dict[int, str] | None:
    if options.hosts is None:
        return None
    path = Path(options.hosts)
    data = read_inventory(path)
    fleet_shards(parse_inventory(data, str(path), allow_remote=options.allow_remote), len(plan.shards), str(path))
    return {shard.number: shard_inventory_toml(data, shard.number) for shard in plan.shards}


def _run_all(children: list[ManagedProcess], run_dir: Path, say: Callable[[str], None]) -> list[int]:
    with orphans.guarded_run(cache_root() / "children", say), stop_signals():
        try:
            for child in children:
                child.start()
            return _wait(children, say)
        except KeyboardInterrupt:
            say(f"stopping every shard (each keeps its finished windows; the same command with --out {run_dir} "
                "goes on from them)")
            for child in children:
                child.terminate()
            return [_code(child.stop()) for child in children]
        finally:
            for child in children:
                child.stop()


def _code(code: int | None) -> int:
    return 130 if code is None else code


def _wait(children: list[ManagedProcess], say: Callable[[str], None]) -> list[int]:
    said = [""] * len(children)
    last_say = 0.0
    while any(c.poll() is None for c in children):
        time.sleep(POLL_S)
        broken = [c for c in children if c.poll() not in (None, 0, 1)]
        if broken and any(c.poll() is None for c in children):
            # The chain needs every shard: one that stopped (bad input, a host gone) ends the run.
            say(f"{broken[0].name} stopped (exit {broken[0].poll()}): stopping the other shards")
            for child in children:
                child.terminate()
            return [_code(child.stop()) for child in children]
        if time.monotonic() - last_say >= SAY_EVERY_S:
            last_say = time.monotonic()
            for index, child in enumerate(children):
                line = tail(child.stdout_path, 1).strip() or tail(child.stderr_path, 1).strip()
                if line and line != said[index]:
                    said[index] = line
                    say(f"{child.name}: {line}")
    return [c.wait() for c in children]


def _last_line(child: ManagedProcess) -> str:
    lines = [line for line in tail(child.stderr_path, 20).splitlines() if line.strip()]
    return lines[-1] if lines else "(nothing on its stderr)"


def write_merged(merged: ShardedRun, run_dir: Path) -> None:
    (run_dir / "shards.json").write_text(json.dumps(_finite(asdict(merged)), indent=1, allow_nan=False) + "\n")
    (run_dir / "shards.md").write_text(render_sharded(merged))


def _finite(value: Any) -> Any:
    """inf (an exactly known df) as null: JSON has no infinity."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
