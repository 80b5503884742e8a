"""What a budget buys a paired run, said before it starts: rounds, launches, and whether that is
enough for a 95% interval.

An interval needs two launches where its table lends a spread, three where it rests on the
stack's own launches (plan/interval_rule.py): nothing in one launch tells a launch's own effect
from the stack's. So a budget that buys too few launches at the asked rounds per launch is
spent on launches of one round each when that buys enough, and the plan line says which, or
what budget would.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from pywebbench.core.errors import UserError
from pywebbench.plan.duet_design import duet_windows
from pywebbench.plan.interval_rule import POOLED_LAUNCHES, launches_needed
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import Method

SESSION_OVERHEAD_S = 4.0
"""Server start, readiness and answer checks per session, as seen on this machine."""
WINDOW_OVERHEAD_S = 0.85
"""Per window beyond its duration and settle: the quiet check before it, the generator's start
and exit, recording (measured: about 85% of a round's wall time is in windows and settles)."""
LAUNCH_PER_STACK_S = 4.0
"""Starting, checking and warming one server, and its share of the quiet wait after a launch."""
SIZING_ROUNDS_PER_LAUNCH = 2
"""calibrate's sizing phase takes at most this many rounds per launch, whatever --rounds-per-launch
asks (commands/sizing.py): its budget is estimated at the same."""


@dataclass(frozen=True)
class Affordable:
    round_s: float
    launch_s: float
    rounds: int
    launches: int
    rounds_per_launch: int
    needed: int
    """Launches an interval needs in a table of this many stacks (plan/interval_rule.py)."""

    @property
    def enough(self) -> bool:
        return self.launches >= self.needed


def round_seconds(options: RunOptions, windows_per_round: int) -> float:
    return windows_per_round * (options.duration_s + options.settle_s + WINDOW_OVERHEAD_S)


def affordable(options: RunOptions, windows_per_round: int, stacks: int, rounds_per_launch: int,
               ratios: int | None = None) -> Affordable:
    """Rounds and launches the budget buys at this many rounds per launch (no budget: the asked
    rounds); `ratios`: those the table holds (default: each stack's to one baseline)."""
    round_s = round_seconds(options, windows_per_round)
    launch_s = stacks * LAUNCH_PER_STACK_S
    if options.budget_s is None:
        rounds = options.rounds
    else:
        per_launch = launch_s + rounds_per_launch * round_s
        whole, rest = divmod(options.budget_s, per_launch)
        rounds = int(whole) * rounds_per_launch + (min(rounds_per_launch, int(max(0.0, rest - launch_s) // round_s))
                                                  if rest > launch_s else 0)
        rounds = max(1, rounds)
    return Affordable(round_s, launch_s, rounds, math.ceil(rounds / rounds_per_launch), rounds_per_launch,
                      launches_needed(stacks - 1 if ratios is None else ratios))


def budget_for(options: RunOptions, windows_per_round: int, stacks: int, launches: int, rounds_per_launch: int) -> float:
    """Seconds that buy `launches` launches of `rounds_per_launch` rounds."""
    return launches * (stacks * LAUNCH_PER_STACK_S + rounds_per_launch * round_seconds(options, windows_per_round))


def fit_to_budget(options: RunOptions, windows_per_round: int, stacks: int, points: int = 1,
                  ratios: int | None = None) -> tuple[RunOptions, str]:
    """The options with rounds per launch lowered where that buys an interval, and the plan's line.
    `ratios`: those the table holds (default: each stack's to one baseline)."""
    asked = affordable(options, windows_per_round, stacks, options.rounds_per_launch, ratios)
    chosen = asked
    if not asked.enough and options.rounds_per_launch > 1 and options.budget_s is not None:
        single = affordable(options, windows_per_round, stacks, 1, ratios)
        if single.enough:
            chosen = single
            options = replace(options, rounds_per_launch=1)
    line = interval_line(options, chosen, asked, windows_per_round, stacks, points)
    if (options.requests or options.workload_requests) and options.generator.runs_to_a_count:
        # A window of N requests lasts as long as the stack takes to answer them (seed 000's db
        # windows: 10-50 s each), so the estimate above is a floor.
        line += (" (if each window took --duration; these windows run to a request count, so the rounds "
                 "measure what they take, and the budget is kept by stopping at its deadline)")
    return options, line


def interval_line(options: RunOptions, chosen: Affordable, asked: Affordable, windows_per_round: int,
                  stacks: int, points: int = 1) -> str:
    """What the budget (each sweep point's share of it) buys; where that is no interval, what would."""
    buys = (f"about {chosen.rounds} round(s) in {chosen.launches} launch(es) of up to {chosen.rounds_per_launch}"
            + (f" (one round per launch: {asked.rounds_per_launch} per launch would buy {asked.launches})"
               if chosen is not asked else ""))
    least = chosen.needed
    head = f"intervals: a 95% interval needs {least} launches"
    head += " (too few stacks to pool their spreads); " if least > POOLED_LAUNCHES else "; "
    head += "the budget buys " if options.budget_s is not None else "this run makes "
    if chosen.enough:
        return head + buys
    need = budget_for(options, windows_per_round, stacks, least, 1) * points
    return (head + buys + f": no ratio interval can be printed; --budget {math.ceil(need / 60)}m buys "
            f"{least} launches of one round" if options.budget_s is not None
            else head + buys + f": no ratio interval can be printed; add --repeats {least * chosen.rounds_per_launch}")


def refuse_small_budget(options: RunOptions, *, sizing_rounds: int, main_variants: int = 3) -> None:
    """calibrate's budget must buy its sizing phase (A and a probe, `sizing_rounds` rounds) and
    the launches of A, A2 and B (and P, interleaved) an interval needs (two ratios lend nothing:
    three launches); else one line before anything starts."""
    if options.budget_s is None:
        return
    per = min(options.rounds_per_launch, SIZING_ROUNDS_PER_LAUNCH)  # the sizing phase's own cap
    sizing = budget_for(options, 2, 2, math.ceil(sizing_rounds / per), per) if sizing_rounds else 0.0
    least = launches_needed(2)
    main = budget_for(options, main_variants, main_variants, least, 1)
    names = "A, A2 and B" if main_variants == 3 else "A, A2, B and the probe"
    if options.budget_s < sizing + main:
        raise UserError(f"--budget {options.budget_s:g}s buys no interval: the sizing phase takes about "
                        f"{sizing:.0f} s and the {least} launches of {names} about {main:.0f} s; "
                        f"give --budget {math.ceil((sizing + main) / 60)}m or more")


def windows_per_round(method: Method, trials: int, stacks: int) -> int:
    """Windows one round takes: a window per trial, or in a duet one per pair it loads and
    workload (both sides in the same window; plan/duet_design.py)."""
    if strategy_of(method).side_by_side:
        return max(1, duet_windows(stacks) * (trials // max(1, stacks)))
    return max(1, trials)


def ratios_in_table(labels: set[str], stack_ids: set[str]) -> int:
    """Ratios the run's table holds: each stack's to the baseline, or where one stack runs in
    versions (a gate's #base and #head, calibrate's A, A2 and B), each version's to its first."""
    return len(labels) - len(stack_ids) if len(labels) > len(stack_ids) else len(labels) - 1


def fit_plan_to_budget(options: RunOptions, plan: Plan, points: int, *, lends: bool = True) -> tuple[RunOptions, str]:
    """fit_to_budget for a plan's first round, each sweep point with its share of the budget.
    `lends`: False where a figure the run exists for rests on one ratio's own launches whatever
    the table holds (calibrate's B against its probe P: three launches, not the two its four
    variants' pooled table would need)."""
    first = [s for s in plan.sessions if s.round == min((x.round for x in plan.sessions), default=1)]
    stacks = max(1, len({s.label for s in first}))
    windows = windows_per_round(options.method, sum(len(s.trials) for s in first) // max(1, points), stacks)
    share = replace(options, budget_s=options.budget_s / max(1, points)) if options.budget_s else options
    ratios = ratios_in_table({s.label for s in first}, {s.stack.id for s in first}) if lends else 1
    fitted, line = fit_to_budget(share, windows, stacks, max(1, points), ratios)
    return replace(options, rounds_per_launch=fitted.rounds_per_launch), line


def estimate_seconds(plan: Plan, options: RunOptions) -> float:
    per_trial = options.warmup_s + options.duration_s
    if options.requests and options.generator.runs_to_a_count:
        per_trial = options.warmup_s + 2.0  # a fixed count: its time depends on the stack
    return len(plan.trials) * (per_trial + 0.5) + len(plan.sessions) * SESSION_OVERHEAD_S
