"""The commands about the machine and the catalog: `list` (stacks, presets) and `doctor` (this
machine's tools, or each host of an inventory over SSH)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

from pywebbench.catalog.registry import Catalog
from pywebbench.commands.common import stack_glob
from pywebbench.commands.python import render_interpreters
from pywebbench.plan.hosts import load_inventory
from pywebbench.plan.presets import PRESETS
from pywebbench.report.tables import render_doctor, render_host_doctor, render_presets, render_stacks
from pywebbench.stage.doctor import check
from pywebbench.stage.envs import EnvironmentBuilder
from pywebbench.stage.hostcheck import check_inventory, require_ready
from pywebbench.stage.interpreters import installed
from pywebbench.stage.listing import listing


def cmd_list(args: argparse.Namespace, catalog: Catalog) -> int:
    stacks = list(catalog.stacks)
    if args.stack:
        stacks = [s for pattern in args.stack for s in stack_glob(catalog, pattern)]
    rows = listing(stacks, EnvironmentBuilder(), build=args.build)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        print(render_stacks(rows), end="")
    return 0


def cmd_list_presets() -> int:
    print(render_presets(PRESETS.values()), end="")
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.hosts is not None:
        return cmd_doctor_hosts(args.hosts, args.allow_remote)
    requirements = check()
    print(render_doctor(requirements), end="")
    print(render_interpreters(installed()), end="")
    return 1 if any(r.required and not r.present for r in requirements) else 0


def cmd_doctor_hosts(path: Path, allow_remote: bool) -> int:
    """Each inventory host over SSH; a host that cannot be reached or lacks a required tool is
    one line and exit 2 (after the table, which says what else is missing)."""
    inventory = load_inventory(path, allow_remote=allow_remote)
    with tempfile.TemporaryDirectory(prefix="pwb-ssh-") as control:  # short: socket paths are capped
        reports = check_inventory(inventory, Path(control))
    print(render_host_doctor(reports), end="")
    require_ready(reports)
    return 0
