"""`pywebbench app`: a person's own WSGI or ASGI app across servers, as a Job for `execute`.

A thin layer: the target, its servers and its traffic come from plan/app.py, its environment,
interface and --setup from stage/appenv.py; the run itself is the ordinary interleaved job
(jobs/console.py's `run_in_terminal`, handed in), so the results file and every report are those of `run`.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pywebbench.analyze.gate import BASE, HEAD, Gate, head_over_base
from pywebbench.analyze.rows import latest_trials
from pywebbench.analyze.tuning import Tuning
from pywebbench.catalog.deploy import deploy_command
from pywebbench.catalog.model import ConcurrencyType, Interface, ServerVariant, Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.commands.ci import (
    DEFAULT_GATE, check_ci_files, finish_run, gate_drawn, gate_exit_code, refuse_ci_files, write_gate_files,
    write_run_files,
)
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import Job, Outcome
from pywebbench.measure.machine import usable_cpus
from pywebbench.measure.round_plan import Budget
from pywebbench.measure.runner import Runner
from pywebbench.plan.app import (
    APP_WORKLOAD, AppTarget, app_framework, app_workload, parse_env, parse_target, select_servers,
)
from pywebbench.plan.declared import Command, flags_of
from pywebbench.plan.generators import ChosenBy, Loop, chosen_by, default_generator
from pywebbench.plan.sources import from_sources
from pywebbench.plan.sessions import Plan, Variant, make_plan
from pywebbench.plan.slo import Slo, parse_slo
from pywebbench.plan.app_traffic import AppTraffic, app_traffic, flag_problems
from pywebbench.plan.traffic import RequestSpec
from pywebbench.analyze.replay_fidelity import fidelities
from pywebbench.report.gate import gate_json, gate_markdown, render_gate
from pywebbench.report.profile_diff import profile_lines
from pywebbench.report.mix_table import mix_table_lines
from pywebbench.report.replay_view import replay_lines, replay_markdown
from pywebbench.report.tuning import render_tuning, write_tuning
from pywebbench.results.model import TrialStatus
from pywebbench.results.store import RESULTS_FILE, load_results
from pywebbench.services.backing import Backing
from pywebbench.stage.appenv import AppEnvProvider, app_requirements, detect_interface
from pywebbench.stage.baseline_src import baseline_source
from pywebbench.stage.envs import EnvBuildError, EnvironmentBuilder, EnvProvider, EnvSpec
from pywebbench.jobs.tune import TUNE_LANES, TuneRequest, check_slo_flag, check_tune, tune

Drive = Callable[[Runner, Plan, Budget], int]
"""Measures in place of the method's rounds once the services are up (the tuning engine)."""
RunJob = Callable[[Job, Catalog, str, Drive | None], Outcome]
"""Runs a job against a catalog with a baseline, printing as `run` does (console.run_in_terminal);
with a Drive it prints no run table (the tuning table is printed here instead)."""


@dataclass(frozen=True)
class _Prepared:
    app: AppTarget
    interface: Interface
    forced: bool
    servers: tuple[ServerVariant, ...]
    traffic: AppTraffic
    base: AppTarget | None = None
    """The base version for a gate (--baseline-dir/--baseline-ref)."""

    @property
    def requests(self) -> tuple[RequestSpec, ...]:
        return self.traffic.requests




def run_app(args: argparse.Namespace, catalog: Catalog, run: RunJob, exit_code: Callable[[Outcome], int],
            note: Callable[[str], None]) -> int:
    """Check everything that can be checked before any load, then run the servers interleaved
    (or, with --tune, search each server's workers x threads; with a baseline, base and head
    under each server, answered as head/base)."""
    problems = flag_problems(args)  # the traffic flags' misuses, all at once, before anything is built
    if problems:
        raise UserError("\n".join(problems))
    slo = _check_tune_flags(args, note)
    _check_gate_flags(args)
    if args.tune:
        refuse_ci_files(args, "a tuning run's probes past capacity fail by design (its answer is tuning.md)")
    check_ci_files(args)
    with baseline_source(args.app_dir, directory=args.baseline_dir, ref=args.baseline_ref) as base_dir:
        return _run_app(args, catalog, run, exit_code, note, slo, base_dir)


def _check_gate_flags(args: argparse.Namespace) -> None:
    _one_rate(args)  # a list of rates is refused before anything is prepared
    gate = args.baseline_dir is not None or args.baseline_ref is not None
    if args.fail_on_regression is not None and not gate:
        raise UserError("--fail-on-regression needs --baseline-dir or --baseline-ref (for two finished runs: "
                        "pywebbench compare --fail-on-regression)")
    if gate and args.tune:
        raise UserError("a baseline compares base and head at the same settings; --tune searches settings: "
                        "give one of them")
    if args.tune and getattr(args, "method", None) not in (None, "interleaved", "auto"):
        raise UserError(f"--tune searches settings in its own stages; --method {args.method} is for comparing "
                        "the servers (or base and head) as they are")


def _variants(prepared: _Prepared) -> tuple[Variant, ...]:
    """One per server; with a base, the base's and the head's under each server."""
    head = app_framework(prepared.app, prepared.interface)
    if prepared.base is None:
        return tuple(Variant(Stack(head, s)) for s in prepared.servers)
    base = app_framework(prepared.base, prepared.interface)
    return tuple(v for s in prepared.servers
                 for v in (Variant(Stack(base, s), alias=BASE), Variant(Stack(head, s), alias=HEAD)))


def _run_app(args: argparse.Namespace, catalog: Catalog, run: RunJob, exit_code: Callable[[Outcome], int],
             note: Callable[[str], None], slo: Slo | None, base_dir: Path | None) -> int:
    prepared = _prepare(args, catalog, note, slo, base_dir)
    variants = _variants(prepared)
    traffic = prepared.traffic
    workload = replace(app_workload(prepared.requests, args.expect, args.expect_body, args.with_postgres,
                                    args.ignore_fields), schedule=traffic.schedule)
    catalog = replace(catalog, workloads=(workload,))
    flags: dict[str, Any] = flags_of(args, Command.APP)
    flags.update(stacks=tuple(v.stack.id for v in variants), workloads=(workload.name,),
                 db_rows=1000)  # the harness's own table is not the app's: keep its load short
    rate = _one_rate(args) if traffic.replay_rate is None else traffic.replay_rate
    if traffic.schedule is not None:
        flags["generator"] = chosen_by(ChosenBy.REPLAY).value  # the log's arrivals, scaled to each window's rate
        note(f"replay: {len(traffic.schedule.offsets_s):,} arrivals over {traffic.schedule.span_s:,.0f} s "
             f"(mean {traffic.schedule.mean_rate:,.1f} req/s), played at {traffic.replay_speed:g}x")
    elif slo is not None or rate is not None:
        flags["generator"] = default_generator(Loop.OPEN).value  # open loop: oha sends any mix at a rate
    if traffic.derived is not None:
        print("\n".join(mix_table_lines(traffic.derived)))
    if rate is not None and not args.tune:
        flags["rate"] = rate  # every window at this rate; under --tune, the searches' first
    options = from_sources(config_file=None, environ=os.environ, flags=flags)
    plan = make_plan(catalog, options, usable_cpus(), variants=variants)
    # A tuning run's deploy commands are its winners', in tuning.md; these are the defaults'.
    deploy = {} if args.tune else {s.label: deploy_command(s.stack, s.workers, s.threads) for s in plan.sessions}
    notes = [f"{s.key} monkey-patches the app's blocking calls (--allow-monkeypatch)"
             for s in prepared.servers if s.concurrency is ConcurrencyType.GREENLET]
    for line in notes:
        note(f"note: {line}")
    extra: dict[str, Any] = {"app": _described(args, prepared, notes), "deploy": deploy,
             "traffic": traffic.derived.to_record() if traffic.derived is not None else None,
             "database_url": ("pgbouncer" if args.pgbouncer else "postgres") if args.with_postgres else ""}
    if args.tune:
        extra.update(tune=True, slo=slo.text if slo is not None else None, lanes=TUNE_LANES)
    run_dir = (options.out_dir or Path("runs") / _stamp()).resolve()
    job = Job("app", replace(options, out_dir=run_dir), variants=variants, extra=extra,
              command=redact_env_values(tuple(sys.argv)), env_hook=_env_hook(args, prepared, run_dir))
    if args.tune:
        code = _run_tuning(job, catalog, TuneRequest((), APP_WORKLOAD, slo, rate, args.target_rate), run, exit_code, note)
        if traffic.schedule is not None and (run_dir / RESULTS_FILE).exists():
            _report_replay(run_dir)
        return code
    outcome = run(job, catalog, variants[0].label, None)  # its table ends with the deploy commands
    if traffic.schedule is not None:
        _report_replay(outcome.run_dir)
    try:
        _refuse_if_wrong_everywhere(outcome, note)
    except UserError:
        write_run_files(args, outcome.run_dir, 2)  # the windows that failed, for CI to show
        raise
    if prepared.base is None:
        return finish_run(args, outcome.run_dir, lambda: exit_code(outcome))
    gate = head_over_base(load_results(outcome.run_dir).trials, args.fail_on_regression or DEFAULT_GATE)
    (outcome.run_dir / "gate.json").write_text(gate_json(gate), encoding="utf-8")
    (outcome.run_dir / "gate.md").write_text(gate_markdown(gate), encoding="utf-8")
    print(render_gate(gate), end="")
    print(profile_lines(gate_drawn(outcome.run_dir), (r.stack for r in gate.regressions)), end="")  # --profile
    code = _gate_code(args, gate, outcome, exit_code(outcome), note)
    return write_gate_files(args, outcome.run_dir, gate, code, judged=args.fail_on_regression is not None)


def _gate_code(args: argparse.Namespace, gate: Gate, outcome: Outcome, code: int, note: Callable[[str], None]) -> int:
    return gate_exit_code(args.fail_on_regression, gate, outcome.status == "complete", code, note)


def _check_tune_flags(args: argparse.Namespace, note: Callable[[str], None] = lambda text: None) -> Slo | None:
    """--tune's and --slo's refusals that need no environment: --slo needs --tune and a
    percentile the generators measure, --tune searches workers and threads itself, and
    --rate under --tune is the first rate of an --slo search."""
    check_slo_flag(args.slo, args.tune, args.target_rate)
    if not args.tune:
        return None
    slo = parse_slo(args.slo) if args.slo is not None else None
    flags: dict[str, Any] = flags_of(args, Command.APP)
    rate = _one_rate(args)
    rates = (rate,) if rate is not None else ()
    flags.update(workloads=(APP_WORKLOAD,), generator=None)
    if slo is not None:
        flags.update(generator=default_generator(Loop.OPEN).value)
    check_tune(from_sources(config_file=None, environ=os.environ, flags=flags), slo, resume=False, rates=rates)
    return slo


def _one_rate(args: argparse.Namespace) -> float | None:
    """app's --rate: one offered rate (a curve of several is `run --rate 500,1000` on a catalog stack)."""
    rates: tuple[float, ...] = args.rate or ()
    if len(rates) > 1:
        raise UserError(f"app takes one --rate, got {len(rates)}: with --tune --slo the search finds the "
                        "highest rate that meets the objective")
    return rates[0] if rates else None


def _run_tuning(job: Job, catalog: Catalog, request: TuneRequest, run: RunJob, exit_code: Callable[[Outcome], int],
                note: Callable[[str], None]) -> int:
    """The tuning engine on the app's servers: its table in the terminal, tuning.md and tuning.json."""
    found: list[Tuning] = []

    def drive(runner: Runner, plan: Plan, budget: Budget) -> int:
        stacks = tuple({s.stack.id: s.stack for s in plan.sessions}.values())
        found.append(tune(runner, catalog, replace(request, stacks=stacks), job.options, budget,
                          stack_cpus=len(plan.split.stack), seed=plan.seed, on_note=note))
        return len({t.spec.round for t in runner.results})

    assert job.variants
    outcome = run(job, catalog, job.variants[0].stack.id, drive)
    _refuse_if_wrong_everywhere(outcome, note)
    if not found:
        return exit_code(outcome)
    markdown = write_tuning(outcome.run_dir, found[0])
    print(render_tuning(found[0]))
    note(f"tuning table in {markdown}")
    # Probes past a candidate's capacity fail by design: the answer is valid when a best was found.
    return 0 if found[0].best is not None else 1


def _prepare(args: argparse.Namespace, catalog: Catalog, note: Callable[[str], None], slo: Slo | None,
             base_dir: Path | None = None) -> _Prepared:
    """The bad inputs, each one line: flags, requests, requirements, import, interface, servers."""
    if args.pgbouncer and not args.with_postgres:
        raise UserError("--pgbouncer goes with --with-postgres")
    target = parse_target(args.app)
    app_dir = args.app_dir.resolve()
    if not app_dir.is_dir():
        raise UserError(f"--app-dir {args.app_dir} is not a directory")
    traffic = app_traffic(args)
    app = AppTarget(target, app_dir, args.factory, app_requirements(args.requirements, app_dir),
                    parse_env(args.env, args.env_file))
    forced = Interface(args.interface.upper()) if args.interface else None
    interface = _imported(app, "", note, forced)
    base = None
    if base_dir is not None:
        base = replace(app, app_dir=base_dir, requirements=_base_requirements(args.requirements, app_dir, base_dir))
        if _imported(base, "the baseline ", note, forced) is not interface:
            raise UserError(f"the baseline's {target} is not {interface.value} as the head's is")
    servers, left_out = select_servers(catalog.servers, args.servers, interface,
                                       allow_monkeypatch=args.allow_monkeypatch, factory=app.factory)
    for key, why in left_out:
        note(f"skipped {key}: {why}")
    return _Prepared(app, interface, forced is not None, tuple(servers), traffic, base)


def _report_replay(run_dir: Path) -> None:
    """How closely each window kept the log's pace, in the terminal and in replay.md."""
    trials = latest_trials(load_results(run_dir).trials)
    found = fidelities(trials)
    for line in replay_lines(found):
        print(line)
    (run_dir / "replay.md").write_text(replay_markdown(trials, found), encoding="utf-8")


def _imported(app: AppTarget, which: str, note: Callable[[str], None], forced: Interface | None) -> Interface:
    """Build the app's environment and import it there: its interface, or a one-line refusal."""
    note(f"{which}{app.target}: building its environment ({len(app.requirements)} requirement(s)) and importing it")
    try:
        probe = EnvironmentBuilder().ensure(EnvSpec(app.requirements, (), sys.executable), retry_failed=True)
    except EnvBuildError as exc:
        raise UserError(f"{which or 'the app'}'s requirements failed to install: {exc}") from None
    try:
        return detect_interface(probe, app.target, app.factory, app.app_dir, app.process_env, forced)
    except UserError as exc:
        raise UserError(f"{which}{exc}" if which else str(exc)) from None


def _base_requirements(requirements: Path | None, app_dir: Path, base_dir: Path) -> tuple[str, ...]:
    """The base's own packages: the --requirements file at the same place in the base's tree
    (a dependency bump is a change the gate should see), else the base's pyproject."""
    if requirements is not None:
        try:
            inside = requirements.resolve().relative_to(app_dir)
        except ValueError:
            return app_requirements(requirements, app_dir)  # outside the app: the same file for both
        return app_requirements(base_dir / inside if (base_dir / inside).exists() else requirements, base_dir)
    return app_requirements(None, base_dir)


def _described(args: argparse.Namespace, prepared: _Prepared, notes: list[str]) -> dict[str, Any]:
    """What the results header keeps of the app: never its --env values, which may be secrets."""
    app = prepared.app
    return {"target": app.target, "interface": prepared.interface.value, "forced": prepared.forced,
            "factory": app.factory, "requirements": list(app.requirements), "env_keys": sorted(k for k, _ in app.env),
            "setup": args.setup, "requests": [f"{r.label} weight={r.weight}" for r in prepared.requests],
            "ignore_fields": list(args.ignore_fields), "notes": notes}


def _env_hook(args: argparse.Namespace, prepared: _Prepared, run_dir: Path) -> Callable[[Backing], EnvProvider]:
    """The environment builder with --setup (in the base's app dir too), which gets DATABASE_URL
    once the services are up."""
    app = prepared.app

    def hook(backing: Backing) -> EnvProvider:
        def services_env() -> dict[str, str]:
            url = backing.database_url()
            return {"DATABASE_URL": url} if url is not None else {}
        return AppEnvProvider(EnvironmentBuilder(), app.app_dir, app.process_env, args.setup, run_dir / "logs",
                              services_env, prepared.base.app_dir if prepared.base is not None else None)
    return hook


def _stamp() -> str:
    return datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")


def redact_env_values(argv: tuple[str, ...]) -> tuple[str, ...]:
    """The command line with each --env VALUE hidden (KEY=***): an app's environment may hold secrets."""
    out = list(argv)
    for i, word in enumerate(out):
        if word.startswith("--env="):
            out[i] = "--env=" + word.removeprefix("--env=").split("=", 1)[0] + "=***"
        elif word == "--env" and i + 1 < len(out):
            out[i + 1] = out[i + 1].split("=", 1)[0] + "=***"
    return tuple(out)


def _refuse_if_wrong_everywhere(outcome: Outcome, note: Callable[[str], None]) -> None:
    """Name each server that was not loaded; an app that answered wrongly on every server is bad
    input (exit 2), as it would have been had it been checked before the run."""
    trials = latest_trials(load_results(outcome.run_dir).trials)
    wrong = [t for t in trials if t.status in (TrialStatus.INVALID_RESPONSE, TrialStatus.SERVER_FAILED)]
    for label in sorted({t.spec.label for t in wrong}):
        first = next(t for t in wrong if t.spec.label == label)
        note(f"{label} was not loaded: {(first.error or first.status.value).splitlines()[0]}")
    if outcome.status == "complete" and trials and len(wrong) == len(trials):
        raise UserError(f"the app failed on every server: {(wrong[0].error or '').splitlines()[0]}")

