"""`run` (and `run --tune`, `run --slo`) and `sweep`: a job planned from the options, run in the terminal."""

from __future__ import annotations

import argparse

from pywebbench.analyze.tuning import Tuning
from pywebbench.catalog.registry import Catalog
from pywebbench.commands.ci import check_ci_files, finish_run, refuse_ci_files
from pywebbench.commands.common import command_flags, command_options, options_and_knobs
from pywebbench.commands.pin_gate import cmd_pin_gate, gating
from pywebbench.jobs.console import err, exit_code, run_in_terminal
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import Job
from pywebbench.measure.round_plan import Budget
from pywebbench.measure.runner import Runner
from pywebbench.plan.generators import Loop, default_generator
from pywebbench.plan.options import DEFAULT_SUITE, SPELLINGS
from pywebbench.plan.sessions import Plan, choose_stacks
from pywebbench.plan.slo import parse_slo
from pywebbench.plan.sweep import parse_knobs
from pywebbench.report.ranking_view import render_ranking
from pywebbench.report.tuning import render_tuning, write_tuning
from pywebbench.results.store import load_results
from pywebbench.jobs.sharded import run_sharded
from pywebbench.jobs.tune import TUNE_LANES, TuneRequest, check_slo_flag, check_stacks, check_tune, tune


def cmd_run(args: argparse.Namespace, catalog: Catalog) -> int:
    if gating(args) or args.fail_on_regression is not None:  # a package's pull request against its base
        return cmd_pin_gate(args, catalog)
    if args.shards is not None:
        refuse_ci_files(args, "a sharded run's answer is its chained shards.md")
        return cmd_sharded(args, catalog)
    if args.tune or args.slo is not None or args.target_rate is not None:  # their checks: check_slo_flag
        refuse_ci_files(args, "a tuning run's probes past capacity fail by design (its answer is tuning.md)")
        return cmd_tune(args, catalog)
    check_ci_files(args)
    options, preset, knobs = options_and_knobs(args)
    job = Job("sweep" if knobs else "run", options, knobs, preset=preset)
    job.points  # parse the knobs now: a bad one is an error before anything starts
    outcome = run_in_terminal(job, catalog, args.resume, wide=bool(args.wide))
    return finish_run(args, outcome.run_dir, lambda: exit_code(outcome))


def cmd_sharded(args: argparse.Namespace, catalog: Catalog) -> int:
    """run --shards N: the shards' runs at once, then their ratios chained (jobs/sharded.py)."""
    if args.tune or args.slo is not None:
        raise UserError("--tune searches one stack's settings on one set of hosts: it takes no --shards")
    if args.resume is not None:
        raise UserError("a sharded run goes on with the same command and its --out: each shard resumes its own "
                        "directory, and a complete one is kept")
    options, _preset, knobs = options_and_knobs(args)
    code, run_dir = run_sharded(options, catalog, knobs, lambda text: err.print(text, markup=False))
    merged = run_dir / "shards.md"
    if merged.exists():
        print(merged.read_text())
        err.print(f"chained result in {merged} and {run_dir / 'shards.json'}")
    return code


def cmd_tune(args: argparse.Namespace, catalog: Catalog) -> int:
    """run --tune: the tuning engine (jobs/tune.py) in place of the method's rounds; its table, not the run's."""
    check_slo_flag(args.slo, args.tune, args.target_rate)
    slo = parse_slo(args.slo) if args.slo is not None else None
    rates: tuple[float, ...] = args.rate or ()
    options, preset = command_options(args, {"generator": default_generator(Loop.OPEN).value}
                                      if slo is not None and args.generator is None else {})
    if preset is not None:
        raise UserError("--tune does not take a --preset")
    check_tune(options, slo, resume=args.resume is not None, rates=rates)
    check_stacks(choose_stacks(catalog, options)[0], chosen=options.stacks != DEFAULT_SUITE)
    found: list[Tuning] = []

    def drive(runner: Runner, plan: Plan, budget: Budget) -> int:
        stacks = tuple({s.stack.id: s.stack for s in plan.sessions}.values())
        request = TuneRequest(stacks, options.workloads[0], slo, rates[0] if rates else None, args.target_rate)
        found.append(tune(runner, catalog, request, options, budget, stack_cpus=len(plan.split.stack),
                          seed=plan.seed, on_note=lambda text: err.print(text, markup=False)))
        return len({t.spec.round for t in runner.results})

    job = Job("tune", options, extra={"slo": slo.text if slo is not None else None, "lanes": TUNE_LANES})
    outcome = run_in_terminal(job, catalog, None, table=None, drive=drive)
    if not found:
        return exit_code(outcome)
    tuning = found[0]
    markdown = write_tuning(outcome.run_dir, tuning)
    print(render_tuning(tuning))
    err.print(f"tuning table in {markdown}")
    # Probes past a candidate's capacity fail by design: the answer is valid when a best was found.
    return 0 if tuning.best is not None else 1


def cmd_sweep(args: argparse.Namespace, catalog: Catalog) -> int:
    options, preset, knobs = options_and_knobs(args)
    if not knobs and args.resume is None:
        raise UserError("sweep needs at least one --knob NAME=VALUES (e.g. --knob connections=10,100,1000)")
    axes = parse_knobs(knobs)
    flags = command_flags(args)
    for axis in axes:
        if flags.get(SPELLINGS.get(axis.knob.value, axis.knob.value)) is not None:
            raise UserError(f"--{axis.knob.value.replace('_', '-')} and --knob {axis.knob.value}=... both set it")
    job = Job("sweep", options, knobs, preset=preset)
    job.points
    outcome = run_in_terminal(job, catalog, args.resume, wide=bool(args.wide))
    results = load_results(outcome.run_dir)
    print(render_ranking(results))
    return exit_code(outcome)
