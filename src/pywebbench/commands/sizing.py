"""calibrate's sizing run: A's CPU per request and what one loop of the injected work costs the
app, measured in the method being calibrated, so B spins the loops that slow it by the asked share."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from pywebbench.plan.budgeting import SIZING_ROUNDS_PER_LAUNCH
from pywebbench.analyze.calibrate_probe import EXTRA_WORK_ENV
from pywebbench.analyze.calibrate import (
    Sizing, expected_ab, share_words, size_extra_work, sizing_variants,
)
from pywebbench.analyze.paired import Interval
from pywebbench.catalog.registry import Catalog
from pywebbench.jobs.console import err, run_in_terminal
from pywebbench.jobs.execute import ABORTED, Job
from pywebbench.plan.options import RunOptions
from pywebbench.results.store import load_results

SIZING_ROUNDS = 8
"""Rounds of A beside B's probe: enough that B's loop cost is known to about ±6%."""


def sizing_phase(options: RunOptions, catalog: Catalog, stack_id: str, per_us: float, slowdown: float,
                 run_dir: Path) -> tuple[Sizing, Interval | None, float] | int:
    """The sizing run: A's CPU per request and a probe's cost; the loops B gets, the B/A they
    should give (with its interval) and the seconds measured; an exit code if it did not finish."""
    err.print(f"sizing: A's CPU per request and what a loop costs the app, for a {slowdown:.0%} slowdown of B")
    sized = sizing_variants(catalog, stack_id, per_us)
    probe_loops = int(dict(sized[1].app_env)[EXTRA_WORK_ENV])
    # Sized in the method being calibrated (restart: interleaved): beside a partner in a duet,
    # alone on the CPU otherwise. A duet's side-by-side windows share the host's speed, so the
    # probe's CPU ratio is read far more tightly there.
    method = options.method.sizing_method
    sizing = Job("calibrate", replace(options, method=method, repeats=SIZING_ROUNDS, precision=None,
                                     rounds_per_launch=min(options.rounds_per_launch, SIZING_ROUNDS_PER_LAUNCH),
                                     budget_s=None, out_dir=run_dir / "sizing"),
                 variants=sized, extra={"phase": "sizing"})
    outcome = run_in_terminal(sizing, catalog, None, table=None, baseline=f"{sized[0].stack.id}#A")
    if outcome.status != "complete":
        return 1 if outcome.status == ABORTED else 130
    read = size_extra_work(load_results(outcome.run_dir), slowdown, probe_loops)
    expected = expected_ab(read)
    err.print(f"sizing: A spends {read.cpu_a_us:,.0f} us per request, a loop costs the app "
              f"{read.per_loop_us * 1000:.1f} ns: B spins {read.loops:,} loops on "
              + share_words(read.share)
              + (f" (expected B/A {expected.center:.4f} [{expected.low:.4f}, {expected.high:.4f}])"
                 if expected is not None else ""))
    return read, expected, outcome.ledger.get("measured windows", 0.0)
