"""A run seen from the terminal: the plan's lines, the progress view, the ledger and the exit code.

The commands in `cli` (run, sweep, tune, calibrate, app) all execute a job this one way.
"""

from __future__ import annotations

import shutil
import sys
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress as Progress_, TaskID, TextColumn, TimeRemainingColumn

from pywebbench.analyze.rows import latest_trials
from pywebbench.catalog.registry import BASELINE_STACK, Catalog
from pywebbench.core.errors import UserError
from pywebbench.jobs.execute import ABORTED, Job, Outcome, execute, job_from_results, load_for_resume
from pywebbench.measure.window import phases_of
from pywebbench.measure.round_plan import Budget
from pywebbench.measure.runner import Progress, Runner
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.report.formats import terminal_report
from pywebbench.report.terminal import WIDTH
from pywebbench.results.model import TrialResult, TrialStatus
from pywebbench.results.store import load_results, results_path

err = Console(stderr=True, highlight=False, soft_wrap=True)


def _print_plan(plan: Plan, options: RunOptions, seconds: float, baseline: str = BASELINE_STACK) -> None:
    points = len({s.point for s in plan.sessions})
    rounds = len({s.round for s in plan.sessions})
    err.print(
        f"plan: {len({s.label for s in plan.sessions})} stacks x {len(options.workloads)} workloads"
        + (f" x {points} sweep points" if points > 1 else "")
        + f" x {rounds} rounds = {len(plan.trials)} trials, about {seconds / 60:.1f} min "
        f"(+ first-time environment builds); stack CPUs {list(plan.split.stack)}, generator CPUs "
        f"{list(plan.split.loadgen)}"
    )
    if not plan.split.disjoint:
        err.print(f"warning: the stack and the load generator share CPUs {sorted(set(plan.split.stack) & set(plan.split.loadgen))}: "
                  "every figure includes their contest for them (each trial records a cpu-overlap check)")
    for stack_id, reason in plan.skipped:
        err.print(f"skipped {stack_id}: {reason}")
    # The run's own baseline (app: its first server, calibrate: A), not the catalog's: ratios are to it.
    if baseline not in {s.label for s in plan.sessions}:
        err.print(f"note: the baseline {baseline} is not in this run, so no ratios will be shown")


def _print_tune_plan(plan: Plan) -> None:
    err.print(f"tune: {len({s.stack.id for s in plan.sessions})} worker class(es); stack CPUs {list(plan.split.stack)}, "
              f"generator CPUs {list(plan.split.loadgen)}")
    for stack_id, reason in plan.skipped:
        err.print(f"skipped {stack_id}: {reason}")


class _ProgressView:
    """A progress bar with ETA on a terminal; one line per step otherwise (CI logs)."""

    def __init__(self) -> None:
        self._bar: Progress_ | None = None
        self._task: TaskID | None = None

    def __enter__(self) -> _ProgressView:
        if err.is_terminal:
            self._bar = Progress_(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                                  TimeRemainingColumn(), console=err, transient=True)
            self._bar.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.__exit__(None, None, None)

    def __call__(self, progress: Progress) -> None:
        if self._bar is None:
            eta = f", ~{progress.eta_s / 60:.1f} min left" if progress.eta_s is not None else ""
            err.print(f"[{progress.done}/{progress.total}] {progress.current}{eta}")
            return
        if self._task is None:
            self._task = self._bar.add_task(progress.current, total=progress.total)
        self._bar.update(self._task, completed=progress.done, total=progress.total, description=progress.current)


def run_dir_for(options: RunOptions, resume: Path | None) -> Path:
    if resume is not None:
        return resume.resolve()
    stamp = datetime.now(timezone.utc)
    return (options.out_dir or Path("runs") / stamp.strftime("%Y%m%d-%H%M%S")).resolve()


def run_in_terminal(job: Job, catalog: Catalog, resume: Path | None, *, table: TextIO | None = sys.stdout,
             baseline: str = BASELINE_STACK, drive: Callable[[Runner, Plan, Budget], int] | None = None,
             wide: bool = False) -> Outcome:
    resumed = load_for_resume(resume.resolve()) if resume is not None else None
    if resumed is not None:
        job = job_from_results(resumed)
        baseline = str(resumed.header.options.get("baseline") or baseline)
    run_dir = run_dir_for(job.options, resume)
    with _ProgressView() as view:
        outcome = execute(job, catalog, run_dir=run_dir, resume=resumed,
                          on_plan=lambda plan, seconds: _print_plan(plan, job.options, seconds, baseline)
                          if drive is None else _print_tune_plan(plan),
                          on_progress=view, on_note=lambda text: err.print(text), baseline=baseline, drive=drive)
    if table is not None and drive is None:  # a driven run (--tune) prints its own table
        print(render_terminal_for(run_dir, wide), file=table)
    for line in ledger_lines(outcome):
        err.print(line)
    err.print(f"results in {results_path(run_dir)}")
    return outcome


def exit_code(outcome: Outcome) -> int:
    """130 interrupted; 1 when some trial failed or is invalid; else 0 (see EXIT_CODES)."""
    if outcome.status == ABORTED:
        return 1  # a service died for good: the run stopped, its finished trials kept
    if outcome.status != "complete":
        return 130
    trials = latest_trials(load_results(outcome.run_dir).trials)
    refuse_if_wrong_everywhere(trials)
    return 0 if trials and all(t.valid for t in trials) else 1


def refuse_if_wrong_everywhere(trials: Sequence[TrialResult]) -> None:
    """No server answered right in the check before any load, so nothing was loaded: bad input
    (exit 2) in one line naming the check, rather than a run that merely "failed" (exit 1)."""
    if not trials or any(t.status is not TrialStatus.INVALID_RESPONSE for t in trials):
        return
    first = min(trials, key=lambda t: (t.spec.label, t.spec.workload))
    others = len({t.spec.label for t in trials}) - 1
    more = f"; and {others} other server{'s' if others > 1 else ''}, in the table above" if others else ""
    raise UserError(f"no server passed the answer check made before any load, so nothing was measured: "
                    f"{first.spec.label} {first.spec.workload}: {(first.error or 'wrong answer').splitlines()[0]}{more}")


def render_terminal_for(run_dir: Path, wide: bool = False) -> str:
    return terminal_report(load_results(run_dir), terminal_width(), wide)


def terminal_width() -> int:
    """Where the terminal table goes: $COLUMNS, else the terminal's width, else (a pipe, a file) WIDTH."""
    return shutil.get_terminal_size((WIDTH, 24)).columns


def ledger_lines(outcome: Outcome) -> list[str]:
    """How the wall time went, largest first, with the share spent measuring."""
    total = outcome.wall_s or 1.0
    *parts, (rest, rest_s) = phases_of(outcome.ledger, outcome.wall_s).items()
    lines = [f"wall time {outcome.wall_s:.0f}s, of which measured windows "
             f"{outcome.ledger.get('measured windows', 0.0) / total:.0%}:"]
    lines += [f"  {name:<20} {seconds:7.1f}s {seconds / total:5.0%}"
              for name, seconds in sorted(parts, key=lambda kv: -kv[1]) + [(rest, rest_s)]]
    return lines
