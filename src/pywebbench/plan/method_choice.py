"""`--method auto`: the run's method chosen before it plans, and said in one line.

A duet gives two stacks equal shares of the same CPUs and reads their ratio side by side, so it
answers how efficiently each turns CPU into answers; that is the question for a workload that
keeps the stacks on the CPU, and there it resolves far smaller differences (docs/method.md). A
stack waiting on PostgreSQL or the upstream is limited by the wait, not the CPU, and its duet
ratio would say little: such workloads are measured interleaved, each stack alone on the CPU in
its window. The choice reads what each workload waits on (`Workload.needs`); after a duet run
the report checks it against each side's measured CPU share (report/common.waiting_sides) and
names any stack that waited anyway.
"""

from __future__ import annotations

from pywebbench.catalog.workloads import Needs
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan
from pywebbench.results.model import Method

WAITED_ON = {Needs.DATABASE: "PostgreSQL", Needs.UPSTREAM: "the upstream"}


def choose_method(options: RunOptions, plan: Plan, *, tuning: bool = False) -> tuple[Method, str]:
    """The method a run of `plan` uses, and the line that says why ('' when it was asked for)."""
    if options.method is not Method.AUTO:
        return options.method, ""
    because = None
    if tuning:
        because = "the tuning engine compares its candidates in interleaved rounds"
    elif options.allocation == "adaptive":
        because = "--allocation adaptive starts each launch with only the stacks still open"
    elif options.placed:
        because = "a duet needs both sides on this machine's CPUs"
    elif len({s.label for s in plan.sessions}) < 2:
        because = "a duet needs two stacks and this run has one"
    if because is not None:
        return Method.INTERLEAVED, f"--method auto: interleaved ({because})"
    waits = {w.name: sorted(WAITED_ON[n] for n in w.needs if n in WAITED_ON)
             for s in plan.sessions for w in s.workloads}
    waiting = sorted((name, on) for name, on in waits.items() if on)
    if waiting:
        said = "; ".join(f"{name} waits on {' and '.join(on)}" for name, on in waiting)
        return Method.INTERLEAVED, (f"--method auto: interleaved ({said}: a duet's equal CPU shares would "
                                    "measure the wait, not the stacks)")
    return Method.DUET, (f"--method auto: duet ({', '.join(sorted(waits))} keep"
                         f"{'s' if len(waits) == 1 else ''} the stacks on the CPU; each side's CPU share is "
                         "checked after the run)")
