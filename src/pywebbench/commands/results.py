"""The commands that read finished runs: `compare`, `report` and `history`."""

from __future__ import annotations

import argparse
import sys
import time
from functools import partial
from pathlib import Path

from pywebbench.analyze.compare import compare_results
from pywebbench.analyze.profile_pairs import compare_pairs
from pywebbench.analyze.history import Figure, history_entry, history_view
from pywebbench.commands.ci import check_ci_files, html_beside, write_ci_files
from pywebbench.jobs.console import err, terminal_width
from pywebbench.core.errors import UserError
from pywebbench.report.comparison import render_comparison, render_comparison_markdown
from pywebbench.report.formats import renderer, terminal_report, write_report
from pywebbench.report.history_view import HISTORY_FORMATS
from pywebbench.report.junit import comparison_junit
from pywebbench.report.profile_diff import changes_markdown, profile_lines, write_diff_flames
from pywebbench.report.summary import comparison_summary
from pywebbench.report.terminal import WIDTH
from pywebbench.results.history import append_entry, read_history
from pywebbench.results.store import load_results
from pywebbench.stage.gitref import resolve_ref


def cmd_compare(args: argparse.Namespace) -> int:
    check_ci_files(args)
    before, after = load_results(args.before), load_results(args.after)
    comparison = compare_results(before, after)
    if args.json:
        print(comparison.to_json())
    elif args.markdown:
        print(render_comparison_markdown(comparison), end="")
    else:
        print(render_comparison(comparison), end="")
    code = 0
    regressions = comparison.regressions(args.fail_on_regression) if args.fail_on_regression is not None else ()
    for regression in regressions:
        err.print(f"regression: {regression.line}", markup=False)
    if args.fail_on_regression is not None:
        code = 1 if regressions else 0
    after_dir = args.after.resolve()
    after_dir = after_dir.parent if after_dir.is_file() else after_dir
    # Both runs profiled: the differential flame graphs go beside the later run's profiles.
    drawn = write_diff_flames(after_dir, compare_pairs(before.profiles, after.profiles))
    err.print(profile_lines(drawn, (r.change.stack for r in regressions)), end="", markup=False)
    return write_ci_files(args, lambda: comparison_junit(comparison, args.fail_on_regression, after),
                          lambda: comparison_summary(comparison, args.fail_on_regression, tuple(sys.argv),
                                                     html=html_beside(after_dir), profiles=changes_markdown(drawn)),
                          code)


def cmd_report(args: argparse.Namespace) -> int:
    render = renderer(args.format)
    if args.format == "terminal":  # the one format with a width: the terminal's (a file's: the default)
        width = WIDTH if args.output else terminal_width()
        render = partial(terminal_report, width=width, wide=bool(args.wide))
    results = load_results(args.run_dir)
    if args.output:
        try:
            write_report(args.format, results, args.output, render)
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
