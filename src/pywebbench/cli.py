"""Thin command line: parse, then hand the command to its module (pywebbench/commands/). One
catch of UserError: one line per problem (a config file may have several), exit 2."""

from __future__ import annotations

import sys

from pywebbench.commands.arguments import build_parser
from pywebbench.catalog.registry import build_catalog
from pywebbench.commands.calibrate import cmd_calibrate
from pywebbench.commands.python import cmd_python
from pywebbench.commands.results import cmd_compare, cmd_history, cmd_report
from pywebbench.commands.run import cmd_run, cmd_sweep
from pywebbench.commands.setup import cmd_doctor, cmd_list, cmd_list_presets
from pywebbench.jobs.console import err, exit_code, run_in_terminal
from pywebbench.core.errors import UserError
from pywebbench.commands.app import run_app
from pywebbench.plan.declared import take_refused
from pywebbench.results.store import ResultsWriteError


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.refused = take_refused(args)  # bad flag values: named with the options' own problems
    try:
        if args.refused and args.command not in ("run", "sweep", "calibrate"):  # those join them (commands/common.py)
            raise UserError("\n".join(args.refused))
        if args.command == "doctor":
            return cmd_doctor(args)
        if args.command == "report":
            return cmd_report(args)
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "history":
            return cmd_history(args)
        if args.command == "python":
            return cmd_python(args)
        if args.command == "list" and args.presets:
            return cmd_list_presets()
        catalog = build_catalog()
        if args.command == "list":
            return cmd_list(args, catalog)
        if args.command == "sweep":
            return cmd_sweep(args, catalog)
        if args.command == "calibrate":
            return cmd_calibrate(args, catalog)
        if args.command == "app":  # your own app: commands/app.py, run as `run` runs
            return run_app(args, catalog, lambda j, c, b, d: run_in_terminal(j, c, None, baseline=b, drive=d,
                                                                             wide=bool(args.wide)),
                           exit_code, err.out)
        return cmd_run(args, catalog)
    except ResultsWriteError as exc:  # mid-run: what was recorded stands, the run did not finish
        print(f"pywebbench: error: {exc}", file=sys.stderr)
        return 1
    except UserError as exc:
        for problem in exc.problems:  # one line each, never wrapped
            print(f"pywebbench: error: {problem}", file=sys.stderr)
        return 2
