"""`--method auto`: the run's method chosen before it plans, and said in one line.

A duet gives two stacks equal shares of the same CPUs and reads their ratio side by side, so it
answers how efficiently each turns CPU into answers; that is the question for a workload that
keeps the stacks on the CPU, and there it resolves far smaller differences (docs/method.md). A
stack waiting on PostgreSQL or the upstream is limited by the wait, not the CPU, and its duet
ratio would say little: such workloads are measured interleaved, each stack alone on the CPU in
its window. A run holding both kinds measures each by its own method, one part after the other
(choose_methods). The choice reads what each workload waits on (`Workload.needs`); after a duet run
the report checks it against each side's measured CPU share (report/common.waiting_sides) and
names any stack that waited anyway.
"""

from __future__ import annotations

from dataclasses import dataclass

from pywebbench.catalog.workloads import Needs
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.results.model import Method

WAITED_ON = {Needs.DATABASE: "PostgreSQL", Needs.UPSTREAM: "the upstream"}


@dataclass(frozen=True)
class MethodPart:
    """Some of the run's workloads and the method they are measured by."""

    method: Method
    workloads: tuple[str, ...]


def choose_methods(options: RunOptions, plan: Plan, *, tuning: bool = False) -> tuple[tuple[MethodPart, ...], str]:
    """The method of each of the run's workloads, as parts run one after the other (one part
    when one method serves them all), and the line that says why ('' when it was asked for).

    A run of `hello` and `db` measures `hello` by duet and `db` interleaved: the CPU-bound
    comparison gets the tighter design, and the one waiting on PostgreSQL the one that measures
    each stack alone on the CPU."""
    workloads = tuple(options.workloads)
    waits = _waits(plan)
    computing = tuple(w for w in workloads if not waits.get(w))
    waiting = tuple(w for w in workloads if waits.get(w))
    if options.method is not Method.AUTO or _duet_refused(options, plan, tuning) or not computing or not waiting:
        method, line = choose_method(options, plan, tuning=tuning)
        return (MethodPart(method, workloads),), line
    said = "; ".join(f"{name} waits on {' and '.join(waits[name])}" for name in waiting)
    return ((MethodPart(Method.DUET, computing), MethodPart(Method.INTERLEAVED, waiting)),
            f"--method auto: duet for {', '.join(computing)} (on the CPU), then interleaved for "
            f"{', '.join(waiting)} ({said}: a duet's equal CPU shares would measure the wait); "
            "each interval is labelled with its method")


def _waits(plan: Plan) -> dict[str, list[str]]:
    """Each workload's name and what it waits on (none: it keeps the stacks on the CPU)."""
    return {w.name: sorted(WAITED_ON[n] for n in w.needs if n in WAITED_ON) for s in plan.sessions for w in s.workloads}


def _duet_refused(options: RunOptions, plan: Plan, tuning: bool) -> str | None:
    """Why no workload of this run can have a duet, whatever it waits on."""
    if tuning:
        return "the tuning engine compares its candidates in interleaved rounds"
    if options.allocation == "adaptive":
        return "--allocation adaptive starts each launch with only the stacks still open"
    if options.placed:
        return "a duet needs both sides on this machine's CPUs"
    if len({s.label for s in plan.sessions}) < 2:
        return "a duet needs two stacks and this run has one"
    return None


def choose_method(options: RunOptions, plan: Plan, *, tuning: bool = False) -> tuple[Method, str]:
    """The one method a run of `plan` uses, and the line that says why ('' when it was asked for)."""
    if options.method is not Method.AUTO:
        return options.method, ""
    if (because := _duet_refused(options, plan, tuning)) is not None:
        return Method.INTERLEAVED, f"--method auto: interleaved ({because})"
    waits = _waits(plan)
    waiting = sorted((name, on) for name, on in waits.items() if on)
    if waiting:
        said = "; ".join(f"{name} waits on {' and '.join(on)}" for name, on in waiting)
        return Method.INTERLEAVED, (f"--method auto: interleaved ({said}: a duet's equal CPU shares would "
                                    "measure the wait, not the stacks)")
    return Method.DUET, (f"--method auto: duet ({', '.join(sorted(waits))} keep"
                         f"{'s' if len(waits) == 1 else ''} the stacks on the CPU; each side's CPU share is "
                         "checked after the run)")
