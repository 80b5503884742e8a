"""`run --base-pin SPEC --head-pin SPEC`: a server's or framework's pull request gated against its
base on the catalog's apps and workloads (issue 47 item 4).

Both are pins of one package (plan/pins.py: a git ref, a checkout, a release). Every selected
stack whose environment holds the package runs twice in the same rounds, as `<stack>#base` and
`<stack>#head`, each variant's environment built with its own pin (PWB_PIN in the variant's app
environment, which the results keep per window); stacks that do not use the package are left out
with a note. The answer is app --baseline-ref's: head/base per stack and figure with its 95%
interval, judged against --fail-on-regression (regression, equivalent, improvement, unresolved),
gate.md and gate.json in the run folder, --junit and --summary, and the same exit codes.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from pywebbench.analyze.gate import BASE, HEAD, head_over_base
from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.commands.ci import DEFAULT_GATE, check_ci_files, gate_drawn, gate_exit_code, write_gate_files
from pywebbench.commands.common import options_and_knobs
from pywebbench.jobs.console import err, exit_code, run_in_terminal
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import Job
from pywebbench.measure.stack_env import PIN_ENV, EnvUnavailable, StackEnvironments, uses
from pywebbench.plan.declared import fraction
from pywebbench.plan.options import RunOptions
from pywebbench.plan.pins import parse_pin
from pywebbench.plan.sessions import Variant, choose_stacks
from pywebbench.report.gate import gate_json, gate_markdown, render_gate
from pywebbench.report.profile_diff import profile_lines
from pywebbench.results.model import TrialSpec
from pywebbench.results.store import load_results
from pywebbench.stage.envs import EnvironmentBuilder


def add_gate_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-pin", metavar="REQUIREMENT", help="a gate: the base version of one package "
                        "(NAME@git+URL@REF, a checkout, NAME==VERSION); with --head-pin, each stack that uses it "
                        "runs both in the same rounds, answered as head/base")
    parser.add_argument("--head-pin", metavar="REQUIREMENT", help="a gate: the head version of the same package "
                        "(a pull request's checkout, e.g. .)")
    parser.add_argument("--fail-on-regression", type=fraction, metavar="PCT", default=None,
                        help="with --base-pin/--head-pin: exit 1 when a head/base interval lies wholly past PCT "
                        "(e.g. 2%%) on the worse side: req/s down, p99 or CPU per request up")


def gating(args: argparse.Namespace) -> bool:
    return getattr(args, "base_pin", None) is not None or getattr(args, "head_pin", None) is not None


def check_gate(args: argparse.Namespace, options: RunOptions, knobs: tuple[str, ...]) -> str:
    """The package both pins name, or a one-line refusal of the combination."""
    if args.base_pin is None or args.head_pin is None:
        raise UserError("a gate needs both --base-pin and --head-pin (two versions of one package)")
    base, head = parse_pin(args.base_pin), parse_pin(args.head_pin)
    if base.name != head.name:
        raise UserError(f"--base-pin and --head-pin must be one package: {base.name} and {head.name}")
    if knobs or options.pin is not None or args.tune or args.resume is not None:
        raise UserError("a gate compares base and head at the same settings: no --knob, --pin, --tune or --resume")
    return base.name


def cmd_pin_gate(args: argparse.Namespace, catalog: Catalog) -> int:
    if not gating(args) and args.fail_on_regression is not None:
        raise UserError("--fail-on-regression on run needs --base-pin and --head-pin (for two finished runs: "
                        "pywebbench compare --fail-on-regression)")
    check_ci_files(args)
    options, _preset, knobs = options_and_knobs(args)
    package = check_gate(args, options, knobs)
    stacks = _users(choose_stacks(catalog, options)[0], package, options)
    variants = tuple(v for s in stacks for v in (Variant(s, alias=BASE, app_env=((PIN_ENV, args.base_pin),)),
                                                  Variant(s, alias=HEAD, app_env=((PIN_ENV, args.head_pin),))))
    job = Job("run", replace(options, stacks=tuple(s.id for s in stacks)), variants=variants,
              extra={"gate": {"package": package, "base": args.base_pin, "head": args.head_pin}},
              command=tuple(sys.argv))
    outcome = run_in_terminal(job, catalog, None, baseline=variants[0].label, wide=bool(args.wide))
    gate = head_over_base(load_results(outcome.run_dir).trials, args.fail_on_regression or DEFAULT_GATE)
    (outcome.run_dir / "gate.json").write_text(gate_json(gate), encoding="utf-8")
    (outcome.run_dir / "gate.md").write_text(gate_markdown(gate), encoding="utf-8")
    print(render_gate(gate), end="")
    print(profile_lines(gate_drawn(outcome.run_dir), (r.stack for r in gate.regressions)), end="")  # --profile
    code = gate_exit_code(args.fail_on_regression, gate, outcome.status == "complete", exit_code(outcome),
                          lambda text: err.print(text, markup=False))
    return write_gate_files(args, outcome.run_dir, gate, code, judged=args.fail_on_regression is not None)


def _users(stacks: list[Stack], package: str, options: RunOptions) -> list[Stack]:
    """The stacks whose own environment (on the interpreter asked for) holds the package."""
    environments = StackEnvironments(EnvironmentBuilder(), sys.executable)
    found = []
    for stack in stacks:
        if stack.server.native is not None:
            continue
        probe = TrialSpec("gate", stack.id, options.workloads[0], 1, 1.0, 0.0, 1, options.generator,
                          python=options.python)
        try:
            used = uses(environments.ensure(stack, probe), package)
        except EnvUnavailable as exc:
            err.print(f"{stack.id} left out: {str(exc).splitlines()[0]}", markup=False)
            continue
        if used:
            found.append(stack)
        else:
            err.print(f"{stack.id} left out: it does not use {package}", markup=False)
    if not found:
        raise UserError(f"no selected stack uses {package}: choose stacks whose server or framework it is "
                        "(e.g. --stack '*:granian' for granian)")
    return found
