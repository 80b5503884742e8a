"""Validity checks: is a number about the stack, or about the generator, the machine, or luck?

Each failed check is a string 'name: what was seen', stored with the trial (or added to a
report row for checks across repeats), and every report shows it next to the number with
the advice below.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pywebbench.measure.shape_ceiling import SINK, shape_of
from pywebbench.measure.sizing import sized_from_host
from pywebbench.plan.generators import mean_has_omission_samples
from pywebbench.results.model import TrialResult


class Check(StrEnum):
    GENERATOR_SATURATED = "generator-saturated"
    NEAR_CEILING = "near-ceiling"
    ERRORS = "errors"
    LITTLES_LAW = "littles-law"
    SPREAD = "spread"
    BUSY_MACHINE = "busy-machine"
    NO_OVERLAP = "no-overlap"
    RATE_NOT_REACHED = "rate-not-reached"
    CPU_OVERLAP = "cpu-overlap"
    INSTRUMENT = "instrument-failed"
    BUSY_NEIGHBOURS = "busy-neighbours"
    SIZED_FROM_HOST = "sized-from-host"


RECOMPUTED = frozenset({Check.GENERATOR_SATURATED, Check.NEAR_CEILING, Check.ERRORS, Check.LITTLES_LAW,
                        Check.BUSY_MACHINE, Check.RATE_NOT_REACHED, Check.CPU_OVERLAP, Check.BUSY_NEIGHBOURS,
                        Check.SIZED_FROM_HOST})
"""Checks decided from a trial's stored figures alone, so reports can re-derive them."""

ADVICE: dict[Check, str] = {
    Check.GENERATOR_SATURATED: "the load generator used all of its CPUs, so this figure measures the generator: "
                               "give it more (--loadgen-cpus) or use fewer connections",
    Check.NEAR_CEILING: "the stack is near what the generator reaches against nginx static on this machine (a "
                        "connection shape: against a Go server that does nothing), so differences here are the "
                        "generator's: treat such stacks as tied",
    Check.ERRORS: "some requests failed or answered non-2xx, so req/s counts failures; read the server log "
                  "(runs/<dir>/logs), lower --connections or raise --timeout",
    Check.LITTLES_LAW: "connections, throughput and latency disagree (Little's law): the generator spent time "
                       "outside requests (saturated, reconnecting) or the window was too short; lengthen --duration",
    Check.SPREAD: "repeats disagree: add --repeats, use --precision, or run when the machine is quiet "
                  "(compare CPU ms per request, which moves less)",
    Check.BUSY_MACHINE: "other processes used CPU during the window, so neighbours shaped this number: "
                        "rerun on a quiet machine",
    Check.NO_OVERLAP: "the stack claims to overlap waits but served concurrent slow requests one after another: "
                      "a blocking driver or client under an async server (seed 000's bug)",
    Check.RATE_NOT_REACHED: "the stack could not keep up with the offered rate, so latency here is queueing: "
                            "read the latency-vs-rate curve below this rate",
    Check.CPU_OVERLAP: "the load generator and the stack shared CPUs, so the figure includes their contest for "
                       "them: give them disjoint --stack-cpus and --loadgen-cpus where the machine has 2 CPUs or more",
    Check.BUSY_NEIGHBOURS: "the run's other live servers used CPU during the window (a backlog an earlier window "
                           "left, still draining), so they shaped this number; the window was measured again "
                           "after they were idle, and a window still flagged is left out of the ratios",
    Check.SIZED_FROM_HOST: "with --workers auto the server counted the host's CPUs, not the CPUs it was given (its "
                           "quota or pinning), as it would in a container: its workers share less CPU than they "
                           "expect; deploy it with an explicit worker count (or WEB_CONCURRENCY) for its CPUs",
    Check.INSTRUMENT: "a measurement beside the window failed (the generator ceiling, the #DB sampler, the "
                      "keep-alive probe), so what it feeds is missing for this trial, not zero: read the cause",
}


def check_name(check: str) -> str:
    return check.split(":", 1)[0].strip()


def advice(check: str) -> str:
    try:
        return ADVICE[Check(check_name(check))]
    except ValueError:
        return ""


@dataclass(frozen=True)
class Thresholds:
    generator_busy: float = 0.90
    """Fraction of the generator's CPUs above which it is saturated."""
    near_ceiling: float = 0.80
    """Fraction of the nginx-static ceiling above which the generator is the limit."""
    littles_law_low: float = 0.75
    littles_law_high: float = 1.25
    """Bounds on (req/s x mean latency) / connections for a closed-loop run. wrk is held to
    the low bound only: after a run it adds synthetic samples for every response slower than
    the mean interval (its own coordinated-omission correction, stats_correct), so its mean
    overstates the measured one and the product came out 1.3-1.7 x the connections on
    long-tailed stacks here. Below 0.75, connections sat idle (bjoern's prefork keep-alive
    imbalance showed 0.18)."""
    busy_other_percent: float = 20.0
    """Percent of one core other processes may use during a window."""
    spread: float = 0.10
    """Largest acceptable half-width of the 95% interval, as a fraction of the aggregate."""
    rate_reached: float = 0.95
    busy_neighbours_percent: float = 10.0
    """Percent of one core the run's other live servers may use together during a window. Idle
    servers cost well under 1% each (timers, heartbeats); seed 003's windows after a `cpu`
    window saw them use 29% while the previous stack drained its queue."""


DEFAULT = Thresholds()


def trial_checks(trial: TrialResult, ceiling_rps: float | None, thresholds: Thresholds = DEFAULT) -> tuple[str, ...]:
    """Checks decided by one trial alone."""
    load = trial.load
    if load is None:
        return ()
    found: list[str] = []
    generator = trial.usage("loadgen")
    cpus = len(trial.spec.loadgen_cpus) or 1
    if generator is not None and generator.cpu_percent >= thresholds.generator_busy * 100 * cpus:
        found.append(f"{Check.GENERATOR_SATURATED}: {load.generator} used {generator.cpu_percent:.0f}% "
                     f"of {cpus} CPU{'s' if cpus > 1 else ''}")
    if ceiling_rps and load.rps >= thresholds.near_ceiling * ceiling_rps:
        shape = shape_of(trial.spec.workload)  # a connection shape's ceiling is in its own unit
        unit, against = (shape.unit, SINK) if shape is not None else ("req/s", "nginx static")
        found.append(f"{Check.NEAR_CEILING}: {load.rps:,.0f} {unit} is {load.rps / ceiling_rps:.0%} of the "
                     f"{ceiling_rps:,.0f} {unit} {load.generator} reaches against {against}")
    if not load.requests:
        found.append(f"{Check.ERRORS}: no request completed in the {load.duration_s:.1f}s window")
    if load.errors:
        e = load.socket_errors
        found.append(f"{Check.ERRORS}: {load.errors} of {load.requests + e.total} (connect {e.connect}, "
                     f"read {e.read}, write {e.write}, timeout {e.timeout}, non-2xx {load.non_2xx})")
    if load.rate is None and load.requests and load.latency.mean_ms > 0 and trial.spec.connections > 0:
        in_flight = load.rps * load.latency.mean_ms / 1000.0
        ratio = in_flight / trial.spec.connections
        # a generator that adds its own coordinated-omission samples to the mean (wrk) is held to
        # the low bound only
        high = float("inf") if mean_has_omission_samples(load.generator) else thresholds.littles_law_high
        if not thresholds.littles_law_low <= ratio <= high:
            found.append(f"{Check.LITTLES_LAW}: {load.rps:,.0f} req/s x {load.latency.mean_ms:.1f} ms = "
                         f"{in_flight:.1f} in flight, but {trial.spec.connections} connections")
    other = trial.usage("other")
    if other is not None and other.cpu_percent > thresholds.busy_other_percent:
        found.append(f"{Check.BUSY_MACHINE}: other processes used {other.cpu_percent:.0f}% of a core")
    if neighbours_busy(trial, thresholds):
        neighbours = trial.usage(IDLE_APPS)
        assert neighbours is not None
        found.append(f"{Check.BUSY_NEIGHBOURS}: the other live servers used {neighbours.cpu_percent:.0f}% of a "
                     f"core ({neighbours.cpu_s:.2f} s in the {neighbours.window_s:.1f} s window)")
    shared = sorted(set(trial.spec.stack_cpus) & set(trial.spec.loadgen_cpus))
    if shared:
        found.append(f"{Check.CPU_OVERLAP}: stack and generator both ran on CPU {','.join(map(str, shared))}")
    if trial.stack.sizing is not None and (sized := sized_from_host(trial.stack.sizing)) is not None:
        found.append(f"{Check.SIZED_FROM_HOST}: {sized}")
    if load.rate and load.rps < thresholds.rate_reached * load.rate:
        found.append(f"{Check.RATE_NOT_REACHED}: {load.rps:,.0f} of {load.rate:,.0f} req/s offered")
    return tuple(found)


IDLE_APPS = "idle-apps"
"""The role under which a window records every other live server of the run, summed."""


def neighbours_busy(trial: TrialResult, thresholds: Thresholds = DEFAULT) -> bool:
    """The run's other live servers used more than their share of CPU during this window."""
    neighbours = trial.usage(IDLE_APPS)
    return neighbours is not None and neighbours.cpu_percent > thresholds.busy_neighbours_percent


def instrument_check(what: str, problem: str | None) -> tuple[str, ...]:
    """The check a failed side measurement leaves on its trial (none when it worked)."""
    return () if problem is None else (f"{Check.INSTRUMENT}: {what}: {problem}",)
