"""Every check made before a run starts anything, in the order a run makes them.

Each refusal is one line and exit 2 (UserError), all of a plan's problems at once, before a
service, a server or a results file exists. Options on their own (ranges, combinations, a malformed config) are checked earlier, as
they are read (`RunOptions.validate`, plan/options.py); a command's own inputs by the command
(`tune.check_tune`, `ownapp`); what is checked here needs the plan.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from pywebbench.core.errors import UserError, refusals
from pywebbench.measure.env_preflight import environment_problems
from pywebbench.measure.limits_preflight import limits_problems
from pywebbench.measure.placing import hosts_ready
from pywebbench.plan.hosts import Inventory
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.results.methods import strategy_of
from pywebbench.results.store import results_path
from pywebbench.stage.doctor import check_tools


def preflight(options: RunOptions, plan: Plan, points: Sequence[Sequence[tuple[str, object]]], baseline: str,
              run_dir: Path, resuming: bool) -> Inventory | None:
    """The plan's checks: duet's partner and baseline, the tools, the server's limits, the results
    directory, then the hosts (over SSH). Every problem found in one UserError, a line each.
    Returns the checked inventory (None on one host)."""
    problems = [*_method_problems(options, plan, baseline), *refusals(lambda: check_tools(plan, options)),
                *environment_problems(plan.trials, placed=options.placed),  # interpreters and pins
                *limits_problems(plan.trials, placed=options.placed),  # the app server's cgroup limits
                *_results_problems(run_dir, resuming)]
    if problems:  # before the hosts: their checks reach out over SSH, for a run that cannot start anyway
        raise UserError("\n".join(dict.fromkeys(problems)))
    return hosts_ready(options, points)


def _method_problems(options: RunOptions, plan: Plan, baseline: str) -> list[str]:
    labels = {s.label for s in plan.sessions}
    # auto reaches here unresolved only when it measures some workloads by duet (the rest interleaved).
    if not strategy_of(options.method).pairs_with_baseline:
        return []
    if baseline not in labels:
        return [f"--method {options.method} reads every ratio off pairs that reach the baseline {baseline}: "
                f"add --stack {baseline}"]
    if len(labels) < 2:
        # The baseline alone has no partner: every round would be empty, launched again until the budget ends.
        return [f"--method {options.method} loads two stacks at a time and this run has one ({baseline}): "
                "add a stack, or use --method interleaved"]
    return []


def _results_problems(run_dir: Path, resuming: bool) -> list[str]:
    """The results directory: writable, and empty unless resumed. Made and taken away again to
    learn whether it can be made: a refused run leaves nothing behind, and the results writer makes
    it private (0700) when the run starts."""
    if not resuming and results_path(run_dir).exists():
        return [f"{run_dir} already holds results; choose another --out or use --resume"]
    missing = []
    nearest = run_dir
    while not nearest.exists() and nearest != nearest.parent:
        missing.append(nearest)
        nearest = nearest.parent
    if not missing:
        return [] if nearest.is_dir() and os.access(nearest, os.W_OK | os.X_OK) else \
            [f"cannot write results to {run_dir}: not a writable directory"]
    try:
        run_dir.mkdir(parents=True, mode=0o700)
    except OSError as exc:
        return [f"cannot write results to {run_dir}: {exc.strerror or exc}"]
    finally:
        for made in missing:  # deepest first
            try:
                made.rmdir()
            except OSError:
                pass
    return []

