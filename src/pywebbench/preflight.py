"""Every check made before a run starts anything, in the order a run makes them.

Each refusal is one line and exit 2 (UserError), before a service, a server or a results file
exists. Options on their own (ranges, combinations, a malformed config) are checked earlier, as
they are read (`RunOptions.validate`, plan/options.py); a command's own inputs by the command
(`tune.check_tune`, `ownapp`); what is checked here needs the plan.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pywebbench.errors import UserError
from pywebbench.measure.env_preflight import environment_problems
from pywebbench.measure.limits_preflight import limits_problems
from pywebbench.measure.placing import hosts_ready
from pywebbench.plan.hosts import Inventory
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.results.store import results_path
from pywebbench.stage.doctor import check_tools
from pywebbench.results.model import Method


def preflight(options: RunOptions, plan: Plan, points: Sequence[Sequence[tuple[str, object]]], baseline: str,
              run_dir: Path, resuming: bool) -> Inventory | None:
    """The plan's checks: duet's partner and baseline, the tools, the server's limits, the hosts (over SSH), the
    results directory.
    Returns the checked inventory (None on one host)."""
    labels = {s.label for s in plan.sessions}
    # auto reaches here unresolved only when it measures some workloads by duet (the rest interleaved).
    duet = options.method in (Method.DUET, Method.AUTO)
    if duet and baseline not in labels:
        raise UserError(f"--method {options.method} reads every ratio off pairs that reach the baseline {baseline}: "
                        f"add --stack {baseline}")
    if duet and len(labels) < 2:
        # The baseline alone has no partner: every round would be empty, launched again until the budget ends.
        raise UserError(f"--method {options.method} loads two stacks at a time and this run has one ({baseline}): "
                        "add a stack, or use --method interleaved")
    check_tools(plan, options)
    if problems := environment_problems(plan.trials, placed=options.placed):  # interpreters and pins
        raise UserError("\n".join(problems))
    if problems := limits_problems(plan.trials, placed=options.placed):  # the app server's cgroup limits
        raise UserError("\n".join(problems))
    inventory = hosts_ready(options, points)
    if not resuming and results_path(run_dir).exists():
        raise UserError(f"{run_dir} already holds results; choose another --out or use --resume")
    return inventory
