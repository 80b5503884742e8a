"""Thin command line: parse, build options, plan, run, render. One catch of UserError."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import sys
import tempfile
import time
from dataclasses import asdict, replace
from pathlib import Path


from pywebbench.analyze.calibrate import (calibrate_report, calibration_variants, EXTRA_WORK_ENV, loops_per_us,
                                          size_extra_work, sizing_variants, expected_ab, Sizing)
from pywebbench.analyze.paired import Interval
from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import BASELINE_STACK, Catalog, build_catalog
from pywebbench.analyze.compare import compare_results
from pywebbench.analyze.history import Figure, history_entry, history_view
from pywebbench.report.history_view import HISTORY_FORMATS
from pywebbench.results.history import append_entry, read_history
from pywebbench.stage.gitref import resolve_ref
from pywebbench.stage.doctor import check
from pywebbench.stage.hostcheck import check_inventory, require_ready
from pywebbench.plan.hosts import load_inventory
from pywebbench.stage.envs import EnvironmentBuilder
from pywebbench.stage.listing import listing
from pywebbench.arguments import build_parser
from pywebbench.errors import UserError
from pywebbench.execute import ABORTED, Job
from pywebbench.plan.budgeting import refuse_small_budget
from pywebbench.plan.declared import Command, flags_of
from pywebbench.plan.options import DEFAULT_SUITE, SPELLINGS, RunOptions, from_sources
from pywebbench.plan.sessions import Plan, choose_stacks
from pywebbench.plan.presets import PRESETS, Preset, get_preset, preset_options
from pywebbench.report.calibration import render_calibration
from pywebbench.report.comparison import render_comparison, render_comparison_markdown
from pywebbench.report.formats import renderer, write_report
from pywebbench.report.tables import render_doctor, render_host_doctor, render_presets, render_stacks
from pywebbench.report.ranking_view import render_ranking
from pywebbench.results.store import ResultsWriteError, load_results
from pywebbench.measure.round_plan import Budget
from pywebbench.measure.runner import Runner
from pywebbench.measure.window import phases_of
from pywebbench.analyze.tuning import Tuning
from pywebbench.plan.slo import parse_slo
from pywebbench.report.tuning import render_tuning, write_tuning
from pywebbench.ownapp import run_app
from pywebbench.console import err, exit_code, run_dir_for, run_in_terminal
from pywebbench.tune import TUNE_LANES, TuneRequest, check_slo_flag, check_stacks, check_tune, tune
from pywebbench.plan.knobs import knob_args
from pywebbench.plan.sweep import parse_knobs

SLOWDOWN_PER_HALF_WIDTH = 3.5
"""calibrate stops adding rounds once A/A and A/B are both within ±slowdown/3.5 (1.4% for a 5%
slowdown), where the smallest detectable difference (about 1.43 half-widths) is well under the
slowdown, or when --budget is spent."""
SIZING_ROUNDS = 8
"""Rounds of A beside B's probe: enough that B's loop cost is known to about ±6%."""


def cmd_list(args: argparse.Namespace, catalog: Catalog) -> int:
    stacks = list(catalog.stacks)
    if args.stack:
        stacks = [s for pattern in args.stack for s in _glob(catalog, pattern)]
    rows = listing(stacks, EnvironmentBuilder(), build=args.build)
    if args.json:
        print(json.dumps([r.to_json() for r in rows], indent=2))
    else:
        print(render_stacks(rows), end="")
    return 0


def _glob(catalog: Catalog, pattern: str) -> list[Stack]:
    found = [s for s in catalog.stacks if fnmatch.fnmatchcase(s.id, pattern)]
    if not found:
        found = [catalog.resolve(pattern)]
    return found


def _flags(args: argparse.Namespace) -> dict[str, object]:
    flags = flags_of(args, Command(args.command))
    for name, value in flags.items():
        # argparse reads `--warmup=--` as "no value" and hands over an empty list
        if isinstance(value, list) and name not in ("stack_cpus", "loadgen_cpus"):
            raise UserError(f"--{name.removesuffix('_s').replace('_', '-')} needs a value")
    return flags


def _options(args: argparse.Namespace, extra_flags: dict[str, object] | None = None) -> tuple[RunOptions, str | None]:
    preset = get_preset(args.preset) if getattr(args, "preset", None) else None
    flags = {**_flags(args), **(extra_flags or {})}
    options = from_sources(config_file=args.config, environ=os.environ, flags=flags,
                           preset=preset_options(preset) if preset else None)
    return options, preset.name if preset else None


def preset_knobs(preset: Preset) -> tuple[str, ...]:
    return knob_args(preset.grid)


def cmd_run(args: argparse.Namespace, catalog: Catalog) -> int:
    if args.tune or args.slo is not None:
        return cmd_tune(args, catalog)
    options, preset, knobs = _options_and_knobs(args)
    job = Job("sweep" if knobs else "run", options, knobs, preset=preset)
    job.points  # parse the knobs now: a bad one is an error before anything starts
    outcome = run_in_terminal(job, catalog, args.resume)
    return exit_code(outcome)


def cmd_tune(args: argparse.Namespace, catalog: Catalog) -> int:
    """run --tune: the tuning engine (tune.py) in place of the method's rounds; its table, not the run's."""
    check_slo_flag(args.slo, args.tune)
    slo = parse_slo(args.slo) if args.slo is not None else None
    rates: tuple[float, ...] = args.rate or ()
    options, preset = _options(args, {"generator": "oha"} if slo is not None and args.generator is None else {})
    if preset is not None:
        raise UserError("--tune does not take a --preset")
    check_tune(options, slo, resume=args.resume is not None, rates=rates)
    check_stacks(choose_stacks(catalog, options)[0], chosen=options.stacks != DEFAULT_SUITE)
    found: list[Tuning] = []

    def drive(runner: Runner, plan: Plan, budget: Budget) -> int:
        stacks = tuple({s.stack.id: s.stack for s in plan.sessions}.values())
        request = TuneRequest(stacks, options.workloads[0], slo, rates[0] if rates else None)
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


def _options_and_knobs(args: argparse.Namespace) -> tuple[RunOptions, str | None, tuple[str, ...]]:
    """run's and sweep's options and knobs: one --rate is every window's, a list of them a rate
    axis of the sweep (a latency-versus-offered-load curve); a preset's grid comes first."""
    rates: tuple[float, ...] = args.rate or ()
    options, preset = _options(args, {"rate": rates[0]} if len(rates) == 1 else {})
    knobs: tuple[str, ...] = tuple(getattr(args, "knobs", None) or ())
    if preset is not None:
        knobs = preset_knobs(get_preset(preset)) + knobs
    if len(rates) > 1:
        knobs += ("rate=" + ",".join(f"{r:g}" for r in rates),)
        if options.generator != "oha":
            raise UserError(f"an open-loop --rate needs --generator oha ({options.generator} is closed-loop)")
    return options, preset, knobs


def cmd_sweep(args: argparse.Namespace, catalog: Catalog) -> int:
    options, preset, knobs = _options_and_knobs(args)
    if not knobs and args.resume is None:
        raise UserError("sweep needs at least one --knob NAME=VALUES (e.g. --knob connections=10,100,1000)")
    axes = parse_knobs(knobs)
    flags = _flags(args)
    for axis in axes:
        if flags.get(SPELLINGS.get(axis.knob.value, axis.knob.value)) is not None:
            raise UserError(f"--{axis.knob.value.replace('_', '-')} and --knob {axis.knob.value}=... both set it")
    job = Job("sweep", options, knobs, preset=preset)
    job.points
    outcome = run_in_terminal(job, catalog, args.resume)
    results = load_results(outcome.run_dir)
    print(render_ranking(results))
    return exit_code(outcome)


def _sizing_phase(options: RunOptions, catalog: Catalog, stack_id: str, per_us: float, slowdown: float,
                  run_dir: Path) -> tuple[Sizing, Interval | None, float] | int:
    """The sizing run: A's CPU per request and a probe's cost; the loops B gets, the B/A they
    should give (with its interval) and the seconds measured; an exit code if it did not finish."""
    err.print(f"sizing: A's CPU per request and what a loop costs the app, for a {slowdown:.0%} slowdown of B")
    sized = sizing_variants(catalog, stack_id, per_us)
    probe_loops = int(dict(sized[1].app_env)[EXTRA_WORK_ENV])
    # Sized in the method being calibrated (restart: interleaved): beside a partner in a duet,
    # alone on the CPU otherwise. A duet's side-by-side windows share the host's speed, so the
    # probe's CPU ratio is read far more tightly there.
    method = "interleaved" if options.method == "restart" else options.method
    sizing = Job("calibrate", replace(options, method=method, repeats=SIZING_ROUNDS, precision=None,
                                     rounds_per_launch=min(options.rounds_per_launch, SIZING_ROUNDS // 3),
                                     budget_s=None, out_dir=run_dir / "sizing"),
                 variants=sized, extra={"phase": "sizing"})
    outcome = run_in_terminal(sizing, catalog, None, table=None, baseline=f"{sized[0].stack.id}#A")
    if outcome.status != "complete":
        return 1 if outcome.status == ABORTED else 130
    read = size_extra_work(load_results(outcome.run_dir), slowdown, probe_loops)
    expected = expected_ab(read)
    err.print(f"sizing: A spends {read.cpu_a_us:,.0f} us per request, a loop costs the app "
              f"{read.per_loop_us * 1000:.1f} ns: B spins {read.loops:,} loops per request"
              + (f" (expected B/A {expected.center:.4f} [{expected.low:.4f}, {expected.high:.4f}])"
                 if expected is not None else ""))
    return read, expected, outcome.ledger.get("measured windows", 0.0)


def cmd_calibrate(args: argparse.Namespace, catalog: Catalog) -> int:
    if args.resume is not None:
        raise UserError("a calibration cannot be resumed; run `pywebbench calibrate` again")
    if args.extra_us is not None and args.extra_us <= 0:
        raise UserError(f"--extra-us must be positive, got {args.extra_us}")
    if not 0 < args.slowdown < 0.5:
        raise UserError(f"--slowdown is a fraction such as 0.05, got {args.slowdown}")
    defaults: dict[str, object] = {}
    if args.stacks is None:
        defaults["stacks"] = (BASELINE_STACK,)
    if args.precision is None:
        defaults["precision"] = args.slowdown / SLOWDOWN_PER_HALF_WIDTH
    options, _ = _options(args, defaults)
    if len(options.stacks) != 1:
        raise UserError("calibrate takes one --stack (the same stack runs as A, A again, and B)")
    if options.method == "restart" and options.rounds < 2:
        options = replace(options, repeats=5)
    refuse_small_budget(options, sizing_rounds=0 if args.extra_us is not None else SIZING_ROUNDS)
    stack_id = options.stacks[0]
    started = time.monotonic()
    run_dir = run_dir_for(options, None)
    table = sys.stderr if args.json else sys.stdout
    per_us = loops_per_us()
    extra_loops = round(args.extra_us * per_us) if args.extra_us is not None else 0
    loop_cost_us: float | None = None
    expected: Interval | None = None
    measured_s = 0.0
    if args.extra_us is None:
        sized_up = _sizing_phase(options, catalog, stack_id, per_us, args.slowdown, run_dir)
        if isinstance(sized_up, int):
            return sized_up
        sizing_read, expected, measured_s = sized_up
        extra_loops, loop_cost_us = sizing_read.loops, sizing_read.per_loop_us
    spent = time.monotonic() - started
    budget = None if options.budget_s is None else max(1.0, options.budget_s - spent)
    variants = calibration_variants(catalog, stack_id, extra_loops)
    job = Job("calibrate", replace(options, budget_s=budget, out_dir=run_dir), variants=variants,
              extra={"extra_loops": extra_loops, "slowdown": args.slowdown})
    outcome = run_in_terminal(job, catalog, None, table=table, baseline=f"{variants[0].stack.id}#A")
    main_measured = outcome.ledger.get("measured windows", 0.0)
    wall_s = time.monotonic() - started
    report = calibrate_report(load_results(outcome.run_dir), extra_loops=extra_loops,
                              extra_us=extra_loops / per_us, slowdown=args.slowdown,
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


def cmd_compare(args: argparse.Namespace) -> int:
    comparison = compare_results(load_results(args.before), load_results(args.after))
    if args.json:
        print(comparison.to_json())
    elif args.markdown:
        print(render_comparison_markdown(comparison), end="")
    else:
        print(render_comparison(comparison), end="")
    if args.fail_on_regression is None:
        return 0
    regressions = comparison.regressions(args.fail_on_regression)
    for regression in regressions:
        err.print(f"regression: {regression.line}", markup=False)
    return 1 if regressions else 0


def cmd_list_presets() -> int:
    print(render_presets(PRESETS.values()), end="")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    render = renderer(args.format)
    results = load_results(args.run_dir)
    if args.output:
        try:
            write_report(args.format, results, args.output)
        except OSError as exc:
            raise UserError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    else:
        sys.stdout.write(render(results))
    return 0


def cmd_history(args: argparse.Namespace) -> int:
    """history append: a finished run into the history file; history show: its series and steps."""
    if args.history_command == "append":
        results = load_results(args.run_dir)
        ref = resolve_ref(args.commit, args.branch, Path.cwd())
        run_dir = args.run_dir.resolve()
        entry = history_entry(results, (run_dir.parent if run_dir.is_file() else run_dir).name, ref.commit,
                              ref.branch, time.strftime("%Y-%m-%dT%H:%M:%S+00:00", time.gmtime()))
        append_entry(args.history, entry)
        err.print(f"{args.history}: added {len(entry.rows)} rows of {entry.run_dir} at {ref.commit} ({ref.branch})",
                  markup=False)
        return 0
    text = HISTORY_FORMATS[args.format](history_view(read_history(args.history), Figure(args.figure)))
    if args.output is None:
        sys.stdout.write(text)
        return 0
    try:
        args.output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(f"cannot write {args.output}: {exc.strerror or exc}") from None
    return 0


def cmd_doctor(args: argparse.Namespace) -> int:
    if args.hosts is not None:
        return cmd_doctor_hosts(args.hosts, args.allow_remote)
    requirements = check()
    print(render_doctor(requirements), end="")
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


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "history":
            return cmd_history(args)
        if args.command == "list" and args.presets:
            return cmd_list_presets()
        catalog = build_catalog()
        if args.command == "list":
            return cmd_list(args, catalog)
        if args.command == "sweep":
            return cmd_sweep(args, catalog)
        if args.command == "calibrate":
            return cmd_calibrate(args, catalog)
        if args.command == "app":  # your own app: ownapp.py, run as `run` runs
            return run_app(args, catalog, lambda j, c, b, d: run_in_terminal(j, c, None, baseline=b, drive=d), exit_code, err.out)
        return cmd_run(args, catalog)
    except ResultsWriteError as exc:  # mid-run: what was recorded stands, the run did not finish
        print(f"pywebbench: error: {exc}", file=sys.stderr)
        return 1
    except UserError as exc:
        print(f"pywebbench: error: {exc}", file=sys.stderr)  # one line, never wrapped
        return 2
