"""Thin command line: parse, build options, plan, run, render. One catch of UserError."""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import signal
import sys
import time
import uuid
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from types import FrameType

from rich.console import Console

from pywebbench import __version__
from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import BASELINE_STACK, Catalog, build_catalog
from pywebbench.doctor import check
from pywebbench.envs import EnvironmentBuilder, EnvSpec, cache_root
from pywebbench.errors import UserError
from pywebbench.loadgen.registry import make_generator
from pywebbench.options import RunOptions, from_sources, parse_cpu_list
from pywebbench.plan import Plan, make_plan, needs_of
from pywebbench.reference import GoBuildError
from pywebbench.services import ServiceError
from pywebbench.services.backing import Backing, BackingConfig
from pywebbench.probes.machine import machine_info, usable_cpus
from pywebbench.report.formats import FORMATS, renderer
from pywebbench.results.model import RunHeader
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.runner import Progress, Runner

err = Console(stderr=True, highlight=False, soft_wrap=True)


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {value}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pywebbench", description=__doc__)
    parser.add_argument("--version", action="version", version=f"pywebbench {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    p_list = sub.add_parser("list", help="every stack in the catalog and whether it can run here")
    p_list.add_argument("--json", action="store_true", help="machine-readable output")
    p_list.add_argument("--build", action="store_true", help="build missing stack environments first")
    p_list.add_argument("--stack", action="append", default=None, help="only stacks matching (glob)")

    p_run = sub.add_parser("run", help="run a benchmark and save its results")
    p_run.add_argument("--config", type=Path, help="TOML file with a [run] table of options")
    p_run.add_argument("--stack", action="append", dest="stacks", metavar="FRAMEWORK:SERVER[-MODEL]",
                       help="stack to run (repeatable; globs allowed)")
    p_run.add_argument("--workload", action="append", dest="workloads", help="workload (repeatable)")
    p_run.add_argument("--connections", type=_positive_int)
    p_run.add_argument("--duration", type=float, help="measured seconds per trial")
    p_run.add_argument("--warmup", type=float, help="discarded warmup seconds per trial")
    p_run.add_argument("--workers", type=_positive_int, help="worker processes (default: seed 000's rule)")
    p_run.add_argument("--threads", type=_positive_int, help="threads per worker for threaded servers")
    p_run.add_argument("--stack-cpus", type=parse_cpu_list, help="CPUs for the stack, e.g. 1-3")
    p_run.add_argument("--loadgen-cpus", type=parse_cpu_list, help="CPUs for the load generator, e.g. 0")
    p_run.add_argument("--generator", choices=["wrk", "ab"])
    p_run.add_argument("--requests", type=_positive_int, help="request count (ab)")
    p_run.add_argument("--repeats", type=_positive_int)
    p_run.add_argument("--no-keepalive", dest="keepalive", action="store_const", const=False)
    p_run.add_argument("--seed", type=int, help="seed of the random stack order")
    p_run.add_argument("--out", type=Path, dest="out_dir", help="results directory (default runs/<time>)")
    p_run.add_argument("--max-db-sessions", type=_positive_int, help="pgbouncer's cap on server sessions (100)")
    p_run.add_argument("--db-delay", type=float, help="seconds of pg_sleep in /db (0.02)")
    p_run.add_argument("--db-rows", type=_positive_int, help="rows loaded into the bench table (1000000)")
    p_run.add_argument("--db-pool", type=int, help="app-side pool size; 0 = a connection per request (0)")
    p_run.add_argument("--upstream-delay", type=float, help="seconds the upstream API waits (0.05)")
    p_run.add_argument("--upstream-size", type=_positive_int, help="bytes of the upstream's answer (1024)")
    p_run.add_argument("--cpu-size", type=_positive_int, help="sieve size of /cpu (100000)")
    p_run.add_argument("--topology", choices=["direct", "nginx"], help="nginx: load goes through nginx")
    p_run.add_argument("--driver", help="force one DB driver on every stack (psycopg, psycopg2-gevent, "
                       "psycopg2-eventlet, psycopg2-meinheld, asyncpg), e.g. a blocking one under gevent")

    p_report = sub.add_parser("report", help="render a finished or interrupted run from its results file")
    p_report.add_argument("run_dir", type=Path)
    p_report.add_argument("--format", default="terminal", choices=sorted(FORMATS))
    p_report.add_argument("-o", "--output", type=Path, help="write to a file instead of stdout")

    sub.add_parser("doctor", help="what is installed, what is missing, and how to fix it")
    return parser


def cmd_list(args: argparse.Namespace, catalog: Catalog) -> int:
    builder = EnvironmentBuilder()
    stacks = list(catalog.stacks)
    if args.stack:
        stacks = [s for pattern in args.stack for s in _glob(catalog, pattern)]
    rows: list[dict[str, object]] = []
    for stack in stacks:
        spec = EnvSpec(stack.requirements, stack.overrides, sys.executable)
        reason = stack.unavailable
        if reason is None and args.build:
            try:
                builder.ensure(spec)
            except Exception as exc:  # reported per stack, never fatal to the listing
                reason = f"environment build failed: {exc}"
        if reason is None:
            reason = builder.failure(spec)
            reason = f"environment build failed: {reason}" if reason else None
        env_state = "built" if builder.cached(spec) else "not built yet"
        rows.append({
            "stack": stack.id,
            "framework": stack.framework.title,
            "server": stack.server.title,
            "worker_class": stack.server.worker_class,
            "interface": stack.server.interface.value if stack.server.interface.value != "own"
            else "own",
            "type": stack.concurrency.value,
            "event_loop": stack.server.event_loop,
            "http_parser": stack.server.http_parser,
            "available": reason is None,
            "reason": reason,
            "environment": env_state,
            "requirements": list(stack.requirements),
        })
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    from rich.table import Table

    table = Table(title=f"{len(rows)} stacks ({len([r for r in rows if r['available']])} available)")
    for col in ("Stack", "Interface", "Type", "Loop / parser", "Available"):
        table.add_column(col)
    for r in rows:
        avail = "yes" + ("" if r["environment"] == "built" else " (env not built yet)") if r["available"] \
            else f"no: {r['reason']}"
        table.add_row(str(r["stack"]), str(r["interface"]), str(r["type"]),
                      f"{r['event_loop']} / {r['http_parser']}", avail)
    Console(width=160).print(table)
    return 0


def _glob(catalog: Catalog, pattern: str) -> list[Stack]:
    found = [s for s in catalog.stacks if fnmatch.fnmatchcase(s.id, pattern)]
    if not found:
        found = [catalog.resolve(pattern)]
    return found


def _flags(args: argparse.Namespace) -> dict[str, object]:
    names = ("stacks", "workloads", "connections", "duration", "warmup", "workers", "threads", "stack_cpus",
             "loadgen_cpus", "generator", "requests", "repeats", "keepalive", "seed", "out_dir",
             "max_db_sessions", "db_delay", "db_rows", "db_pool", "upstream_delay", "upstream_size", "cpu_size",
             "topology", "driver")
    flags = {name: getattr(args, name) for name in names}
    for name in ("stacks", "workloads"):
        if flags[name] is not None:
            flags[name] = tuple(flags[name])
    return flags


def _print_plan(plan: Plan, options: RunOptions) -> None:
    per_trial = options.warmup_s + options.duration_s
    estimate = len(plan.trials) * per_trial + len(plan.sessions) * 3
    err.print(
        f"plan: {len(plan.sessions)} stacks x {len(options.workloads)} workloads x {options.repeats} rounds = "
        f"{len(plan.trials)} trials, about {estimate / 60:.1f} min (+ first-time environment builds); "
        f"stack CPUs {list(plan.split.stack)}, generator CPUs {list(plan.split.loadgen)}"
        + ("" if plan.split.disjoint else " (shared: fewer than 2 CPUs)")
    )
    for stack_id, reason in plan.skipped:
        err.print(f"skipped {stack_id}: {reason}")
    if BASELINE_STACK not in {s.stack.id for s in plan.sessions}:
        err.print(f"note: {BASELINE_STACK} is not in this run, so no ratios will be shown")


def _check_tools_for(plan: Plan, options: RunOptions) -> None:
    """A missing tool is a one-line error before anything starts, never a failure mid-run."""
    wanted = {options.generator, "taskset", "uv"}
    needs = {n.value for n in needs_of(plan)}
    if "database" in needs:
        wanted |= {"postgres", "pgbouncer"}
    if "upstream" in needs or any(s.stack.server.native == "go-reference" for s in plan.sessions):
        wanted.add("go")
    if options.topology == "nginx" or any(s.stack.server.native == "nginx" for s in plan.sessions):
        wanted.add("nginx")
    missing = [r for r in check() if r.name in wanted and not r.present]
    if missing:
        first = missing[0]
        raise UserError(f"{first.name} is missing ({first.purpose}); fix: {first.fix}")


def _on_progress(progress: Progress) -> None:
    eta = f", ~{progress.eta_s / 60:.1f} min left" if progress.eta_s is not None else ""
    err.print(f"[{progress.done}/{progress.total}] {progress.current}{eta}")


def _raise_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def cmd_run(args: argparse.Namespace, catalog: Catalog) -> int:
    options = from_sources(config_file=args.config, environ=os.environ, flags=_flags(args))
    generator = make_generator(options.generator)
    plan = make_plan(catalog, options, usable_cpus())
    _check_tools_for(plan, options)
    stamp = datetime.now(timezone.utc)
    run_dir = (options.out_dir or Path("runs") / stamp.strftime("%Y%m%d-%H%M%S")).resolve()
    if results_path(run_dir).exists():
        raise UserError(f"{run_dir} already holds results; choose another --out")
    _print_plan(plan, options)
    header = RunHeader(
        run_id=uuid.uuid4().hex[:12],
        created_at=stamp.isoformat(timespec="seconds"),
        pywebbench_version=__version__,
        command=tuple(sys.argv),
        options={**options.to_json(), "seed": plan.seed},
        machine=machine_info(),
        tools={"generator": generator.version(), "python": sys.version.split()[0]},
        planned_trials=len(plan.trials),
    )
    writer = ResultsWriter(results_path(run_dir), header)
    backing_config = BackingConfig(
        needs=needs_of(plan), max_db_sessions=options.max_db_sessions, db_delay_s=options.db_delay_s,
        db_rows=options.db_rows, db_pool=options.db_pool, upstream_delay_s=options.upstream_delay_s,
        upstream_size=options.upstream_size, cpu_size=options.cpu_size, cpus=plan.split.loadgen,
        go_reference=any(s.stack.server.native == "go-reference" for s in plan.sessions),
    )
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    started = time.monotonic()
    status = "interrupted"
    runner: Runner | None = None
    try:
        with ExitStack() as services:
            backing = Backing(backing_config, cache_root())
            service_start = time.monotonic()
            try:
                services.enter_context(backing)
            except (ServiceError, GoBuildError, OSError, ValueError) as exc:
                raise UserError(f"backing services failed to start: {str(exc).splitlines()[0]}") from exc
            for record in backing.records():
                writer.add_service(record)
            runner = Runner(
                run_dir=run_dir, writer=writer, generator=generator, builder=EnvironmentBuilder(),
                python=sys.executable, backing=backing, topology=options.topology,
                ready_timeout_s=options.ready_timeout_s, request_timeout_s=options.timeout_s,
                keepalive=options.keepalive, on_progress=_on_progress,
            )
            runner.ledger.add("service starts", time.monotonic() - service_start)
            runner.run(plan)
            status = "complete"
    except KeyboardInterrupt:
        err.print("interrupted: stopping; finished trials are saved")
    finally:
        signal.signal(signal.SIGTERM, previous)
        writer.finish(status)
        writer.close()
    total = time.monotonic() - started
    print(render_terminal_for(run_dir))
    ledger = runner.ledger.seconds if runner is not None else {}
    spent = ", ".join(f"{k} {v:.0f}s" for k, v in sorted(ledger.items(), key=lambda kv: -kv[1]))
    err.print(f"wall time {total:.0f}s: {spent}; results in {results_path(run_dir)}")
    return 0 if status == "complete" else 130


def render_terminal_for(run_dir: Path) -> str:
    return renderer("terminal")(load_results(run_dir))


def cmd_report(args: argparse.Namespace) -> int:
    render = renderer(args.format)
    text = render(load_results(args.run_dir))
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def cmd_doctor() -> int:
    from rich.table import Table

    table = Table(title="pywebbench doctor")
    for col in ("Need", "For", "Status", "Fix"):
        table.add_column(col)
    problems = 0
    for r in check():
        ok = r.present
        problems += (not ok) and r.required
        table.add_row(r.name, r.purpose, ("ok: " if ok else "MISSING: ") + r.detail,
                      "" if ok else r.fix + ("" if r.required else " (optional)"))
    Console(width=160).print(table)
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "doctor":
            return cmd_doctor()
        if args.command == "report":
            return cmd_report(args)
        catalog = build_catalog()
        if args.command == "list":
            return cmd_list(args, catalog)
        return cmd_run(args, catalog)
    except UserError as exc:
        print(f"pywebbench: error: {exc}", file=sys.stderr)  # one line, never wrapped
        return 2
