"""docs/method.md: what the method can tell apart here, from the committed calibrate runs.

Every figure on the page is computed from files under docs/results/ (calibrate runs,
method-choice runs, the fidelity pairs); the prose around them names no number of its own.
"""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.analyze.duet import DUET_RUN_DF, DUET_RUN_SD
from pywebbench.report.pages import baseline_all, coverage, duet_checks, loop_cost, rederived, verdicts
from pywebbench.report.pages.calibration import CalibrationRun, across_runs, load_runs, percent, summary, table

TEN_MINUTES_S = 600.0
FIVE_MINUTES_S = 300.0
FOUR_MINUTES_S = 240.0


def readme_calibration(results: Path) -> str:
    """The README's two lines on what calibrate resolves here, from the committed runs."""
    interleaved = load_runs(results / "calibrate" / "interleaved")
    every = [r for r in load_runs(results / "calibrate" / "duet") if r.pairs != "star"]
    return (f"- **Interleaved** (`calibrate --budget 10m`, a 5% slowdown): "
            f"{summary(interleaved, mde_target=0.05, wall_limit_s=TEN_MINUTES_S)}\n"
            f"- **Duet** (`calibrate --method duet --budget 5m`, every pair of stacks loaded each round, a 5% or "
            f"2% slowdown): {summary(every, mde_target=0.02, wall_limit_s=FIVE_MINUTES_S)} Its intervals carry a "
            f"run-level term ({DUET_RUN_SD:.2%} on {DUET_RUN_DF} df, fitted on the first twelve runs) that one "
            "run cannot show.\n")


def _section(runs: list[CalibrationRun], *, mde_target: float, wall_limit_s: float) -> str:
    across = across_runs(runs)
    return (f"{table(runs)}\n\n{summary(runs, mde_target=mde_target, wall_limit_s=wall_limit_s)}"
            + (f"\n\n{across}" if across else ""))


def _fidelity(results: Path) -> str:
    lines = []
    for path in sorted((results / "fidelity").glob("*.json")):
        data = json.loads(path.read_text())
        low, high = data["ci"]
        lines.append(
            f"- `{data['stack']}`: method/bare wrk **{data['ratio']:.4f} [{low:.4f}, {high:.4f}]** over "
            f"{data['pairs']} pairs of {data['duration_s']:g} s windows at {data['connections']} connections "
            f"({min(data['bare_rps']):,.0f}-{max(data['bare_rps']):,.0f} req/s bare): "
            f"{'within' if data['within_3pct'] else 'NOT within'} ±3% "
            f"(`docs/results/fidelity/{path.name}`)."
        )
    return "\n".join(lines) or "No fidelity run committed yet."


def _choices(results: Path) -> str:
    parts = []
    root = results / "method-choices"
    for choice in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        runs = load_runs(choice)
        if runs:
            parts.append(f"**{choice.name}** (`docs/results/method-choices/{choice.name}`):\n\n"
                         f"{_section(runs, mde_target=0.05, wall_limit_s=TEN_MINUTES_S)}")
    return "\n\n".join(parts) or "No method-choice run committed yet."


def _spread(runs: list[CalibrationRun], what: str) -> str:
    values = [v for v in (getattr(r, what) for r in runs) if v is not None]
    return "-" if not values else f"{min(values):.1%}-{max(values):.1%}"


def _windows(choices: Path) -> str:
    """Each window/settle choice's round sd and measured share, from its committed run."""
    parts = []
    for folder in sorted(choices.glob("window-*"), key=lambda p: (len(p.name), p.name)):
        for run in load_runs(folder):
            c = run.figures
            parts.append(f"{c.window_s:g} s windows after {c.settle_s:g} s settles: round sd {percent(run.round_sd)}, "
                         f"{percent(c.main_measured_share)} measured")
    return "; ".join(parts) or "no run committed yet"


def _noise(interleaved: list[CalibrationRun], duet: list[CalibrationRun], choices: Path) -> str:
    return f"""\
- **Fast noise.** One round's A2/A ratio moves by {_spread(interleaved, "round_sd")} (sd) in the
  interleaved runs above: the CPU does more or less work per second from one 4 s window to the
  next, and the kernel counts no steal time for it. Pairing within a round removes the slow
  drift, not this, so the precision comes from many windows. The duet, which loads both
  stacks in the same seconds, cancels much of it ({_spread(duet, "round_sd")}), not all: the
  two generators and servers do not meet the CPU in lockstep.
- **Launch effects.** Each server start has an effect of its own that lasts as long as the
  server (hash seeds, memory layout, which worker gets which connection): {_spread(interleaved, "launch_sd")}
  (sd) in the interleaved runs. An honest interval carries it on as many degrees of freedom
  as there are launches, so the method restarts every few rounds; the runs below with 10 rounds
  per launch show what fewer launches cost.
- **Window and settle.** One 3-minute calibration per setting (below, `scripts/method-choices`):
  {_windows(choices)}. In these single runs one round's sd falls about as 1/sqrt(window): the
  noise is fast, and a longer window buys no precision per second spent; it only cuts the overhead, at the cost of
  rounds and launches per minute (an 8 s window leaves two launches in three minutes, and the
  launch effect on one degree of freedom). 4 s is the shortest window whose measured share
  reaches about the issue's 85% (the ten-minute runs above); without a settle the one run's A/A interval left 1.
  Warmups are timed like settles (0.5 s), since the generators round to whole seconds.
- **The boot storm after a launch.** Gunicorn and uWSGI answer before all their workers have
  imported the app, so a launch of many servers keeps booting after every one of them passed
  its check and warmup: seed 003's first run here (26 stacks, 1 launch) took its first round at
  a load average of 17-39, with windows of 0-56 req/s that the second round measured in the
  thousands (`docs/results/boot-storm/`). The rounds now wait after each
  launch until the launched servers together use less than 0.05 + 0.005 per server of one CPU
  (`measure/quiesce.py`, up to 2 minutes, said in a note when it times out); the wait is in the
  run's time ledger as *quiet after launch*."""


def _positions(runs: list[CalibrationRun]) -> str:
    return "; ".join(f"{r.name}: " + ", ".join(f"{v:.3f}" for v in r.by_position) for r in runs) or "none yet"


def _duet(duet: list[CalibrationRun]) -> str:
    every = [r for r in duet if r.pairs != "star"]
    star = [r for r in duet if r.pairs == "star"]
    return f"""### Every pair of stacks each round (the current design)

{_section(every, mde_target=0.02, wall_limit_s=FIVE_MINUTES_S) if every else "No run committed yet."}

A2/A by a round's position in its launch (first, second, ...): {_positions(every)}.

### The star around A (the earlier design)

Each round loaded every stack beside A, so A was loaded in every window and A2 and B in one
each.

{_section(star, mde_target=0.02, wall_limit_s=FIVE_MINUTES_S) if star else "No run committed."}

A2/A by a round's position in its launch: {_positions(star)}. A2 and A are the same server;
what differed was their history, and it moved the ratio one way in a launch's first round
and the other way after. With two rounds per launch the positions cancelled; with three they
did not, and the A/A interval left 1. Every pair in every round makes each stack's history
the same as every other's (each is loaded in k-1 of the round's k(k-1)/2 windows, and A and
A2 are exchangeable), and the least-squares ratio over all of a round's pairs is as precise
per window spent as the star's direct ratio was (`tests/unit/test_duet_analysis.py`)."""


INTRO = """\
Every run below was made on this project's shared 2-core VM (Intel Xeon, Debian 12, kernel
6.18), nothing else running, the stack on CPU 1 and wrk on CPU 0. `pywebbench calibrate` runs
flask:gunicorn-sync under three names: A, A again (A2), and B, the same app spinning a fixed
number of loop iterations, sized in the run (a sizing phase of 8 rounds reads from the cgroups
what a probe of 100 us nominal costs the running app) to slow a CPU-bound stack by the injected
fraction. Until interleaved run 27 and duet run 24, B spun a tenth of the probe's loops or fewer
on every request; since then it spins the probe's own loops on the share of its requests that
gives the fraction, so the expected B/A no longer assumes a loop costs the same at a tenth of
the probe's count (see "Does a loop cost the app the same" below: it did not remove B's
shortfall against its expected value; on event loops a rare long request cost more than its
loops, so the new stacks' runs below spread the loops over every request again). From interleaved run 33 the main phase runs the probe
too, as a fourth name (P, the probe's loops on every request): what a loop cost the app had moved
between the sizing phase and the main phase by more than the sizing windows showed (B/A scattered
about the sizing's expected ratio 1.45 times as far as both intervals allow, over runs 1-32), so
the expected B/A is now read from P's CPU per request over A's in B's own rounds, and B/A is
judged against it round by round (B/A times 1 + k (P/A - 1), k being B's loops per request over
P's, has an interval by launches like any ratio; it holds 1 where B shows what P predicts). B is
judged on req/s, P on the kernel's CPU time in other processes: B's windows do not enter its
expected value. The sizing's own expectation is kept beside it, and judged across runs apart.
The statistics in each row are re-derived from the run's committed windows
(`results.jsonl`) with today's code; wall time and measured share are what the run recorded.

Columns: *rounds per launch / warmup* are the run's own settings (the defaults changed over
time); *measured* is the main phase's wall time spent in measured windows (settles, warmups,
starts and the harness are the rest; runs before it was recorded show `-`); *injected
(measured)* is the slowdown B's extra CPU per request implies, as the kernel counted it;
*expected B/A (from)* is the ratio B's loops should give, read from the sizing windows or from P
in the same rounds; *launch sd* and *round sd* are where A2/A's variance is (a launch's own effect, one round's)."""


def _new_stacks(results: Path) -> str:
    """Calibrations on stacks neither series had used (issue 46), kept apart from the series."""
    parts = ["## Stacks the series never used: a 2% slowdown within 4-5 minutes\n\n"
             "One run each on stacks neither series had calibrated, kept apart from the series above: whether "
             "B/A holds its expected ratio on other servers and frameworks than the series'. Interleaved runs 1-5 "
             "(`scripts/calibrate-series interleaved N N --stack STACK --slowdown 0.02 --budget 4m`, numbered 60-64 "
             "then) gave B the probe's loops on a share of its requests; fastapi:uvicorn's B then spent 11.0% more "
             "CPU per request than A where 2% was sized, a rare long request costing an event loop more than its "
             "loops. From run 6 (and every duet run here) B spreads the loops over every request "
             "(`analyze/calibrate.size_extra_work`), the runs made with `CALIBRATE_OUT=docs/results/"
             "calibrate-new-stacks scripts/calibrate-series METHOD N N --stack STACK --slowdown 0.02 --budget "
             "4m` (interleaved) or `5m` (duet)."]
    interleaved = load_runs(results / "calibrate-new-stacks" / "interleaved")
    groups = (("Interleaved, B's loops on a share of its requests (runs 1-5)",
               [r for r in interleaved if r.figures.extra_share < 1.0], FOUR_MINUTES_S),
              ("Interleaved, B's loops on every request (runs 6-10)",
               [r for r in interleaved if r.figures.extra_share >= 1.0], FOUR_MINUTES_S),
              ("Duet, B's loops on every request", load_runs(results / "calibrate-new-stacks" / "duet"),
               FIVE_MINUTES_S))
    for title, runs, budget in groups:
        said = (f"{table(runs)}\n\n{summary(runs, mde_target=0.02, wall_limit_s=budget)}" if runs
                else "No run committed yet.")
        parts.append(f"### {title}\n\n{said}")
    return "\n\n".join(parts)


def _coverage(results: Path) -> str:
    """The simulated coverage: the grid of shapes, adaptive allocation, the duet designs."""
    return f"""\
{coverage.section(results)}

### Noisier stacks: coverage per noise class

`python -m pywebbench.analyze.noise_classes docs/results/coverage/noise-classes.json` (in `scripts/coverage`)

{verdicts.classes_section(results)}

### Verdicts: the family's error rate

`python -m pywebbench.analyze.verdict_errors docs/results/coverage/verdict-errors.json` (in `scripts/coverage`)

{verdicts.errors_section(results)}

### Adaptive allocation: coverage when stacks stop early

`python -m pywebbench.analyze.allocation docs/results/coverage/allocation.json` (in `scripts/coverage`)

{coverage.allocation_section(results)}

### The precision stop: coverage when the whole run stops on a look

`python -m pywebbench.analyze.stopping docs/results/coverage/stopping.json` (in `scripts/coverage`)

{coverage.stopping_section(results)}

### Duet designs, up to the whole catalog

`python -m pywebbench.analyze.duet_coverage docs/results/coverage/duet.json` (in `scripts/coverage`)

{coverage.duet_section(results)}

### Duet in launch blocks

`python -m pywebbench.analyze.duet_coverage --blocks docs/results/coverage/duet-blocks.json` (in `scripts/coverage`)

{coverage.blocks_section(results)}

### The duet against what it did not fit

`analyze/duet_checks.py`, on the committed ranking runs that measured by duet

{duet_checks.section(results)}

{baseline_all.section(results)}"""


def render(results: Path) -> str:
    interleaved = load_runs(results / "calibrate" / "interleaved")
    duet = load_runs(results / "calibrate" / "duet")
    return f"""\
# What this machine can tell apart

<!-- Built by scripts/docs from docs/results/; edit src/pywebbench/report/pages/method.py, not this file. -->

{INTRO}
## How often an interval labelled 95% covers the truth

`scripts/coverage`

{_coverage(results)}

### Seed 003, re-derived

{rederived.section(results)}

## Interleaved: a 5% slowdown within 10 minutes

`scripts/calibrate-series interleaved FIRST LAST --budget 10m`

{_section(interleaved, mde_target=0.05, wall_limit_s=TEN_MINUTES_S)}

### Does a loop cost the app the same at the probe's size and at B's?

{loop_cost.section(interleaved, results / "calibrate-probe")}

{_new_stacks(results)}

## Duet: a 2% slowdown within 5 minutes

`scripts/calibrate-series duet FIRST LAST --slowdown 0.02 --budget 5m`

{_duet(duet)}

## Why these defaults: what the noise here looks like

{_noise(interleaved, duet, results / 'method-choices')}

## The launch count and the warmup

The same calibration with other settings, kept as the evidence for the defaults. Fewer
launches spend more of the wall time measuring, but each server start has an effect of its own
that lasts as long as the server; with few launches an honest interval carries that effect on
a handful of degrees of freedom (Kalibera & Jones: spend repetitions where the variance is).

{_choices(results)}

## Fidelity: does the method read what bare wrk reads?

`scripts/fidelity --stack STACK --pairs 10` starts a stack the way `run` does, beside two
idle copies, and alternates (random order per pair) the method's window with a bare `wrk` of
the same connections, duration and pinning against the same live server.

{_fidelity(results)}
"""
