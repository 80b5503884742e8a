"""--junit FILE and --summary FILE of `run`, `app` and `compare`: the answer in CI's own terms.

The renderers are report/junit.py and report/summary.py; this writes their text. Where each file
goes is checked before anything starts (a missing folder is bad input, exit 2); a write that
fails after the run is reported on stderr and fails the command (exit 1 where it would pass), so
a CI step never passes without the file it was asked for. Otherwise the exit code is the command's.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

from pywebbench.jobs.console import err
from pywebbench.core.errors import UserError
from pywebbench.analyze.gate import Gate, GateFigure
from pywebbench.analyze.profile_pairs import gate_pairs
from pywebbench.report.junit import gate_junit, run_junit
from pywebbench.report.profile_diff import Drawn, changes_markdown, write_diff_flames
from pywebbench.report.summary import gate_summary, run_summary
from pywebbench.results.store import load_results

Text = Callable[[], str]
"""A file's text, made only when the file was asked for."""
DEFAULT_GATE = 0.02
"""The threshold a gate (app --baseline-*, run --base-pin/--head-pin) is judged at without --fail-on-regression."""


def wanted(args: argparse.Namespace) -> bool:
    return getattr(args, "junit", None) is not None or getattr(args, "summary", None) is not None


def check_ci_files(args: argparse.Namespace) -> None:
    """Both files writable where asked, and not the same file, before any minute is spent."""
    junit, summary = getattr(args, "junit", None), getattr(args, "summary", None)
    if junit is not None and summary is not None and junit.resolve() == summary.resolve():
        raise UserError(f"--junit and --summary name the same file: {junit}")
    for flag, path in (("--junit", junit), ("--summary", summary)):
        if path is None:
            continue
        if path.is_dir():
            raise UserError(f"{flag} {path} is a directory: give a file")
        if not path.resolve().parent.is_dir():
            raise UserError(f"{flag} {path}: the folder {path.resolve().parent} does not exist")


def refuse_ci_files(args: argparse.Namespace, why: str) -> None:
    if wanted(args):
        raise UserError(f"--junit and --summary report a run's windows or a gate's verdicts; {why}")


def write_ci_files(args: argparse.Namespace, junit: Text, summary: Text, code: int) -> int:
    """Write what was asked; the command's exit code, or 1 in place of 0 when a write failed."""
    failed = False
    for path, text in ((getattr(args, "junit", None), junit), (getattr(args, "summary", None), summary)):
        if path is None:
            continue
        try:
            Path(path).write_text(text(), encoding="utf-8")
        except OSError as exc:
            err.print(f"pywebbench: error: cannot write {path}: {exc.strerror or exc}", markup=False)
            failed = True
    return (code or 1) if failed else code


def html_beside(run_dir: Path) -> str | None:
    """The run's HTML report when one was written into its folder (`report --format html -o DIR/report.html`)."""
    page = run_dir / "report.html"
    return str(page) if page.is_file() else None


def finish_run(args: argparse.Namespace, run_dir: Path, code_of: Callable[[], int]) -> int:
    """The exit code of a finished run, with --junit and --summary written from its results
    (also when the code is a refusal, exit 2: every server answered wrongly)."""
    if not wanted(args):
        return code_of()
    try:
        code = code_of()
    except UserError:
        write_run_files(args, run_dir, 2)
        raise
    return write_run_files(args, run_dir, code)


def write_run_files(args: argparse.Namespace, run_dir: Path, code: int) -> int:
    """The run's windows as JUnit (a case per stack and workload) and its tables as a summary."""
    if not wanted(args):
        return code
    results = load_results(run_dir)
    return write_ci_files(args, lambda: run_junit(results),
                          lambda: run_summary(results, results.header.command, code=code, html=html_beside(run_dir)),
                          code)


def write_gate_files(args: argparse.Namespace, run_dir: Path, gate: Gate, code: int, judged: bool) -> int:
    """A gate's verdicts: a case per stack and figure; a regression fails its case when the gate was
    asked to fail the run (`judged`: --fail-on-regression), as it fails the exit code."""
    if not wanted(args):
        return code
    results = load_results(run_dir)
    return write_ci_files(args, lambda: gate_junit(gate, results, fails=judged),
                          lambda: gate_summary(gate, results.header.command, code=code, html=html_beside(run_dir),
                                               profiles=changes_markdown(gate_drawn(run_dir))),
                          code)


def gate_drawn(run_dir: Path) -> tuple[Drawn, ...]:
    """A gate run's differential flame graphs (base and head both profiled), written beside its profiles."""
    return write_diff_flames(run_dir, gate_pairs(load_results(run_dir).profiles))


def gate_exit_code(fail_on_regression: float | None, gate: Gate, complete: bool, code: int,
                   note: Callable[[str], None]) -> int:
    """A gate run's exit code: 1 on a regression past --fail-on-regression, or when req/s got no
    interval (windows lost, the run cut short); a flagged window (a busy runner) does not fail it."""
    if fail_on_regression is None:
        note(f"the gate judged at +-{DEFAULT_GATE:.0%} and did not fail the run: --fail-on-regression PCT does")
        return code
    if gate.failed:
        return 1
    judged = all(r.interval is not None for r in gate.rows if r.figure is GateFigure.RPS)
    return 0 if complete and gate.rows and judged else code or 1
