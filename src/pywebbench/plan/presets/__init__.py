"""Presets: each experiment of the seed documents, as options this harness can run.

A preset is the seed's setup written down once: its stacks, workloads, load generator and
knobs, the sweep it ran (if any), how it made one figure from its repeats, and the figures
it published, so a report can show "measured here" next to "published". Where the seed used
a bigger machine, the preset scales it to this one and its description says how.

A preset's `options` sit between the config file and the environment / flags: any flag
still overrides them. A few things a seed did cannot be said with run-wide options yet
(`grid`, `workers_per_cpu`, `workload_requests`, `variants`); the planner applies them, as
each field's docstring says.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

from pywebbench.catalog.model import DRIVER_REQUIREMENTS
from pywebbench.catalog.registry import Catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_sources
from pywebbench.plan.sweep import KnobAxis, format_value, knob_named, parse_values
from pywebbench.catalog.workloads import get_workload

from pywebbench.plan.presets.model import METRICS, Claim, Figure, OptionValue, Preset, Variant
from pywebbench.plan.presets.seed000 import SEED000, SEED000_BETTER_ASYNC, SEED000_BETTER_SYNC, SEED000_ORIGINAL
from pywebbench.plan.presets.seed001 import (
    SEED001, SEED001_POSTGRESQL, SEED001_SYNC_CLIENT, SEED001_SYNC_CLIENT_POSTGRESQL,
)
from pywebbench.plan.presets.seed002 import SEED002
from pywebbench.plan.presets.seed003 import SEED003
from pywebbench.plan.presets.seed004 import SEED004

PRESETS: Mapping[str, Preset] = MappingProxyType({
    preset.name: preset
    for preset in (SEED000, SEED000_ORIGINAL, SEED000_BETTER_ASYNC, SEED000_BETTER_SYNC, SEED001,
                   SEED001_SYNC_CLIENT, SEED001_POSTGRESQL, SEED001_SYNC_CLIENT_POSTGRESQL, SEED002, SEED003,
                   SEED004)
})


def get_preset(name: str) -> Preset:
    try:
        return PRESETS[name]
    except KeyError:
        raise UserError(f"unknown preset {name!r}; known: {', '.join(PRESETS)}") from None


def preset_options(preset: Preset) -> dict[str, object]:
    """The preset's options, typed and keyed by flag or field name, as `from_sources` takes them.

    The aggregation is included so a report made from the results file uses the seed's.
    """
    extra: dict[str, object] = {}
    if preset.workers_per_cpu is not None:
        extra["workers_per_cpu"] = preset.workers_per_cpu
    if preset.workload_requests:
        extra["workload_requests"] = preset.workload_requests
    return {**preset.options, "aggregation": preset.aggregation, **extra}


def preset_axes(preset: Preset) -> tuple[KnobAxis, ...]:
    """The preset's grid as sweep axes, each value checked by the sweep's own rules."""
    axes: list[KnobAxis] = []
    for name, values in preset.grid:
        knob = knob_named(name)
        if not values:
            raise UserError(f"preset {preset.name}: knob {name} has no values")
        axes.append(KnobAxis(knob, parse_values(knob, ",".join(format_value(knob, v) for v in values))))
    return tuple(axes)


def check_preset(preset: Preset, catalog: Catalog) -> RunOptions:
    """Everything a run of this preset would refuse, refused now; returns its options.

    Stacks must exist and be available here, workloads and knobs must be known, options must
    pass `from_sources`, and every published figure must name a stack, workload and grid
    point (or variant) of the preset.
    """
    if "aggregation" in preset.options:
        raise UserError(f"preset {preset.name}: give the aggregation as Preset.aggregation, not an option")
    options = from_sources(config_file=None, environ={}, flags=preset_options(preset))
    for stack_id in preset.stacks + tuple(v.stack for v in preset.variants):
        stack = catalog.resolve(stack_id)
        if stack.unavailable:
            raise UserError(f"preset {preset.name}: {stack_id} is unavailable here: {stack.unavailable}")
    workloads = {get_workload(name).name for name in preset.workloads}
    for variant in preset.variants:
        if variant.driver not in DRIVER_REQUIREMENTS or not set(variant.workloads) <= workloads:
            raise UserError(f"preset {preset.name}: variant {variant.label} has an unknown driver or workload")
    for workload, count in preset.workload_requests:
        if workload not in workloads or count <= 0:
            raise UserError(f"preset {preset.name}: bad request count {count} for workload {workload!r}")
    if preset.workers_per_cpu is not None and (preset.workers_per_cpu <= 0 or "workers" in preset.options):
        raise UserError(f"preset {preset.name}: workers_per_cpu must be positive and exclude a fixed workers")
    axes = {axis.knob.value: axis.values for axis in preset_axes(preset)}
    labels = set(preset.stacks) | {v.label for v in preset.variants}
    for figure in preset.published:
        if figure.stack not in labels or figure.workload not in workloads or figure.metric not in METRICS:
            raise UserError(f"preset {preset.name}: published {figure} names no stack/workload/metric of it")
        for knob, value in figure.where:
            if value not in axes.get(knob, ()):
                raise UserError(f"preset {preset.name}: published {figure} is at no grid point of it")
    for claim in preset.claims:
        for label in claim.higher + claim.lower:
            if label not in labels or claim.workload not in workloads:
                raise UserError(f"preset {preset.name}: claim {claim.quote!r} names no stack/workload of it: {label}")
        for knob, value in claim.where:
            if value not in axes.get(knob, ()):
                raise UserError(f"preset {preset.name}: claim {claim.quote!r} is at no grid point of it")
    if not preset.published and not preset.published_from.startswith("none:"):
        raise UserError(f"preset {preset.name}: no published figures and no 'none:' reason")
    return options


__all__ = [
    "METRICS", "PRESETS", "Claim", "Figure", "OptionValue", "Preset", "Variant", "check_preset", "get_preset", "preset_axes",
    "preset_options",
]
