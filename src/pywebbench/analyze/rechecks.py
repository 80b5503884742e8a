"""A trial's checks under today's rules, re-derived at report time from its stored figures."""

from __future__ import annotations

from pywebbench.analyze.stats import half_width
from pywebbench.catalog.protocols import protocol_of
from pywebbench.measure.checks import DEFAULT, RECOMPUTED, Check, Thresholds, check_name, trial_checks
from pywebbench.measure.shape_ceiling import RECORD, shape_of
from pywebbench.plan.knob_values import knob_value
from pywebbench.results.model import TrialResult, ResultSet


def spread_check(rps_ci: tuple[float, float] | None, center: float | None, repeats: int,
                 thresholds: Thresholds = DEFAULT) -> str | None:
    half = half_width(rps_ci, center)
    if half is None or half <= thresholds.spread:
        return None
    return f"{Check.SPREAD}: 95% interval ±{half:.0%} over {repeats} repeats"


def recorded_ceilings(results: ResultSet) -> dict[tuple[object, ...], float]:
    """Generator ceilings the run measured, keyed as GeneratorCeiling keys them."""
    found: dict[tuple[object, ...], float] = {}
    for service in results.services:
        c = service.config
        if service.name in ("generator-ceiling", RECORD) and c.get("rps") and not c.get("errors"):
            # `requests` (ab's fixed count) is part of the key since it shapes the ceiling; older
            # records lack it and stand for every count. The protocol too: h2load's ceiling in h2c
            # is not wrk's over h1 (records from before the protocol knob are h1's).
            key: tuple[object, ...] = (c.get("connections"), tuple(c.get("loadgen_cpus", ())),
                                       tuple(c.get("stack_cpus", ())), c.get("requests"), c.get("protocol", "h1"))
            if service.name == RECORD:  # a shape's own ceiling: its workload's alone (a paced one has none)
                shape = shape_of(str(c.get("workload")))
                if shape is None or shape.paced:
                    continue
                key = (c["workload"], *key[:3])
            found[key] = float(c["rps"])
    return found


def rechecked(trial: TrialResult, ceilings: dict[tuple[object, ...], float]) -> tuple[str, ...]:
    """A trial's checks under the current rules, from its stored figures.

    Checks that need the live server (no-overlap) are kept as recorded; the rest are
    recomputed, so a corrected rule applies to old results files too.
    """
    if trial.load is None:
        return trial.checks
    spec = trial.spec
    protocol = protocol_of(spec.protocol).value
    connections = knob_value(spec, "connections")  # a ceiling is keyed as measure/ceiling.py measured it
    ceiling = ceilings.get((connections, spec.loadgen_cpus, spec.stack_cpus, spec.requests, protocol),
                           ceilings.get((connections, spec.loadgen_cpus, spec.stack_cpus, None, protocol)))
    if shape_of(spec.workload) is not None:  # never nginx static's: its own, or none
        ceiling = ceilings.get((spec.workload, connections, spec.loadgen_cpus, spec.stack_cpus))
    now = trial_checks(trial, ceiling)
    firing = {check_name(c) for c in now}
    # A stored check that still fires keeps its recorded wording; one that no longer fires goes.
    kept = tuple(c for c in trial.checks if check_name(c) not in RECOMPUTED or check_name(c) in firing)
    kept_names = {check_name(c) for c in kept}
    return kept + tuple(c for c in now if check_name(c) not in kept_names)


