"""`calibrate`: the same stack as A, A again and B (slowed by a sized amount of work), to show
what the method detects and whether its intervals hold the truth."""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import asdict, replace

from pywebbench.analyze.calibrate import Sizing, calibrate_report, calibration_variants, loops_per_us
from pywebbench.analyze.paired import Interval
from pywebbench.catalog.registry import BASELINE_STACK, Catalog
from pywebbench.commands.common import command_options
from pywebbench.commands.sizing import SIZING_ROUNDS, sizing_phase
from pywebbench.jobs.console import exit_code, run_dir_for, run_in_terminal
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import Job
from pywebbench.measure.window import phases_of
from pywebbench.plan.budgeting import refuse_small_budget
from pywebbench.report.calibration import render_calibration
from pywebbench.results.methods import strategy_of
from pywebbench.results.store import load_results

def _refuse_bad_arguments(args: argparse.Namespace) -> None:
    if args.resume is not None:
        raise UserError("a calibration cannot be resumed; run `pywebbench calibrate` again")
    if args.extra_us is not None and args.extra_us <= 0:
        raise UserError(f"--extra-us must be positive, got {args.extra_us}")
    if not 0 < args.slowdown < 0.5:
        raise UserError(f"--slowdown is a fraction such as 0.05, got {args.slowdown}")


def _sized_record(expected: Interval | None) -> dict[str, object]:
    """The sizing's expected B/A in the results file's header, with the error it carries (A's
    and B's own CPU over the sizing's launches: analyze/calibrate_sizing.py)."""
    if expected is None:
        return {}
    return {"sized_expected": {"center": round(expected.center, 6), "low": round(expected.low, 6),
                               "high": round(expected.high, 6), "se_log": round(expected.se_log, 7),
                               "df": round(expected.df, 2) if math.isfinite(expected.df) else None}}


def cmd_calibrate(args: argparse.Namespace, catalog: Catalog) -> int:
    _refuse_bad_arguments(args)
    defaults: dict[str, object] = {}
    if args.stacks is None:
        defaults["stacks"] = (BASELINE_STACK,)
    # No precision stop unless asked for: calibrate checks coverage, and stopping once the
    # intervals look narrow picks the runs whose noise happened to be low. Interleaved runs 15 and
    # 20 stopped that way (after 11 and 7 rounds) and were the two of 20 whose A/A missed 1.
    options, _ = command_options(args, defaults)
    if len(options.stacks) != 1:
        raise UserError("calibrate takes one --stack (the same stack runs as A, A again, and B)")
    if not options.method.paired and options.rounds < 2:
        options = replace(options, repeats=5)
    # Interleaved runs the sizing probe in the main phase too (P): B's expected ratio is read in
    # its own rounds, where the sizing phase's minutes-old reading scattered 1.45x too far.
    probe_in_main = args.extra_us is None and strategy_of(options.method).probes_in_phase
    refuse_small_budget(options, sizing_rounds=0 if args.extra_us is not None else SIZING_ROUNDS,
                        main_variants=4 if probe_in_main else 3)
    stack_id = options.stacks[0]
    started = time.monotonic()
    run_dir = run_dir_for(options, None)
    table = sys.stderr if args.json else sys.stdout
    per_us = loops_per_us()
    extra_loops = round(args.extra_us * per_us) if args.extra_us is not None else 0
    share = 1.0
    loop_cost_us: float | None = None
    expected: Interval | None = None
    sizing_read: Sizing | None = None
    measured_s = 0.0
    if args.extra_us is None:
        sized_up = sizing_phase(options, catalog, stack_id, per_us, args.slowdown, run_dir)
        if isinstance(sized_up, int):
            return sized_up
        sizing_read, expected, measured_s = sized_up
        extra_loops, share, loop_cost_us = sizing_read.loops, sizing_read.share, sizing_read.per_loop_us
    spent = time.monotonic() - started
    budget = None if options.budget_s is None else max(1.0, options.budget_s - spent)
    variants = calibration_variants(catalog, stack_id, extra_loops, share,
                                    probe_loops=sizing_read.probe_loops if probe_in_main and sizing_read else None)
    job = Job("calibrate", replace(options, budget_s=budget, out_dir=run_dir), variants=variants,
              extra={"extra_loops": extra_loops, "extra_share": share, "slowdown": args.slowdown,
                     **_sized_record(expected)})
    outcome = run_in_terminal(job, catalog, None, table=table, baseline=f"{variants[0].stack.id}#A",
                              wide=bool(args.wide))
    main_measured = outcome.ledger.get("measured windows", 0.0)
    wall_s = time.monotonic() - started
    report = calibrate_report(load_results(outcome.run_dir), extra_loops=extra_loops,
                              extra_us=extra_loops * share / per_us, extra_share=share, slowdown=args.slowdown,
                              wall_s=wall_s, loop_cost_us=loop_cost_us, expected=expected,
                              measured_share=(measured_s + main_measured) / wall_s,
                              main_measured_share=main_measured / outcome.wall_s if outcome.wall_s > 0 else None,
                              main_phases=phases_of(outcome.ledger, outcome.wall_s))
    (outcome.run_dir / "calibration.json").write_text(report.to_json())
    if args.json:
        print(json.dumps(asdict(report)))
    else:
        print(render_calibration(report))
    return exit_code(outcome)
