"""How much this machine can tell apart: noise from an A/A run, power from an A/B run.

One stack runs as three names in each round, in a fresh random order: A, A again (A2),
and B, the same app spending a known number of extra microseconds of CPU per request. A/A
gives the noise (how far two identical stacks differ); A/B whether a known, small slowdown
is seen at all with the current repeats and window.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass

from pywebbench.analyze import Row, summarize
from pywebbench.catalog.registry import Catalog
from pywebbench.errors import UserError
from pywebbench.plan import Variant
from pywebbench.results.model import ResultSet
from pywebbench.stats import (
    coefficient_of_variation,
    min_detectable_difference,
    ratio_ci,
    repeats_needed,
)

TARGET_DIFFERENCE = 0.05
EXTRA_WORK_ENV = "PWB_EXTRA_WORK_US"


def calibration_variants(catalog: Catalog, stack_id: str, extra_us: float) -> tuple[Variant, ...]:
    stack = catalog.resolve(stack_id)
    if stack.unavailable:
        raise UserError(f"{stack.id} is unavailable here: {stack.unavailable}")
    if stack.server.native is not None:
        raise UserError(f"calibrate needs a Python stack (its app adds the known work), not {stack.id}")
    return (Variant(stack, "A"), Variant(stack, "A2"),
            Variant(stack, "B", ((EXTRA_WORK_ENV, f"{extra_us:g}"),)))


@dataclass(frozen=True)
class Calibration:
    stack: str
    repeats: int
    duration_s: float
    extra_us: float
    rps_a: float | None
    rps_a2: float | None
    rps_b: float | None
    aa_ratio: float | None
    aa_ratio_ci: tuple[float, float] | None
    noise_cv: float | None
    """Run-to-run coefficient of variation of req/s for one stack (A and A2 pooled)."""
    cpu_noise_cv: float | None
    """The same for CPU time per request, which moves less with neighbours' load."""
    min_difference: float | None
    """Smallest req/s difference detectable at 95% confidence, 80% power, with these repeats."""
    repeats_for_5pct: int | None
    cpu_min_difference: float | None
    cpu_repeats_for_5pct: int | None
    cpu_us_per_req_a: float | None
    cpu_us_per_req_b: float | None
    expected_slowdown: float | None
    """If A is CPU-bound: extra / (A's CPU per request + extra)."""
    ab_ratio: float | None
    ab_ratio_ci: tuple[float, float] | None
    detected: bool | None
    """The A/B interval excludes 1: the known slowdown was seen."""

    def render(self) -> str:
        def pct(v: float | None) -> str:
            return "-" if v is None else f"{v:.1%}"

        def ci(c: tuple[float, float] | None) -> str:
            return "no interval" if c is None else f"[{c[0]:.3f}, {c[1]:.3f}]"

        lines = [
            f"calibration of {self.stack}: {self.repeats} rounds of A, A2 and B in random order, "
            f"{self.duration_s:g}s windows",
            f"  A/A (noise): A {self.rps_a or 0:,.0f} req/s, A2 {self.rps_a2 or 0:,.0f} req/s, ratio "
            f"{self.aa_ratio or 0:.3f} {ci(self.aa_ratio_ci)}; run-to-run variation {pct(self.noise_cv)} of req/s, "
            f"{pct(self.cpu_noise_cv)} of CPU per request",
            f"  smallest difference this machine can tell apart with {self.repeats} repeats: "
            f"{pct(self.min_difference)} in req/s, {pct(self.cpu_min_difference)} in CPU per request",
            f"  repeats a 5% difference needs: {self.repeats_for_5pct or '-'} (req/s), "
            f"{self.cpu_repeats_for_5pct or '-'} (CPU per request)",
            f"  A/B (power): B spends {self.extra_us:g} us more CPU per request; measured CPU per request "
            f"{self.cpu_us_per_req_a or 0:,.0f} -> {self.cpu_us_per_req_b or 0:,.0f} us; expected slowdown "
            f"{pct(self.expected_slowdown)} if CPU-bound",
            f"  B/A ratio {self.ab_ratio or 0:.3f} {ci(self.ab_ratio_ci)}: "
            + {True: "the slowdown was detected", False: "NOT detected: within noise at these settings",
               None: "undecided (fewer than 2 repeats)"}[self.detected],
        ]
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _row(rows: list[Row], alias: str) -> Row | None:
    return next((r for r in rows if r.spec.alias == alias), None)


def _cpu_values(results: ResultSet, alias: str) -> list[float]:
    values = []
    for t in results.trials:
        usage = t.usage("app")
        if t.spec.alias == alias and t.valid and usage is not None and t.load and t.load.requests:
            values.append(usage.cpu_s / t.load.requests)
    return values


def calibrate_report(results: ResultSet, extra_us: float) -> Calibration:
    rows = list(summarize(results).rows)
    a, a2, b = _row(rows, "A"), _row(rows, "A2"), _row(rows, "B")
    if a is None or a2 is None or b is None:
        raise UserError("the calibration run has no result for A, A2 or B (see the run's log)")
    cvs = [cv for cv in (coefficient_of_variation(a.rps_values), coefficient_of_variation(a2.rps_values))
           if cv is not None]
    noise = statistics.fmean(cvs) if cvs else None
    per_request = {alias: _cpu_values(results, alias) for alias in ("A", "A2", "B")}
    cpu_cvs = [cv for cv in (coefficient_of_variation(per_request["A"]),
                             coefficient_of_variation(per_request["A2"])) if cv is not None]
    cpu_noise = statistics.fmean(cpu_cvs) if cpu_cvs else None
    repeats = min(len(a.rps_values), len(a2.rps_values), len(b.rps_values))
    cpu_a = statistics.median(per_request["A"]) * 1e6 if per_request["A"] else None
    cpu_b = statistics.median(per_request["B"]) * 1e6 if per_request["B"] else None
    ab_ci = ratio_ci(b.rps_values, a.rps_values)
    return Calibration(
        stack=a.stack.id, repeats=repeats, duration_s=a.spec.duration_s, extra_us=extra_us,
        rps_a=a.rps, rps_a2=a2.rps, rps_b=b.rps,
        aa_ratio=a2.rps / a.rps if a.rps and a2.rps else None, aa_ratio_ci=ratio_ci(a2.rps_values, a.rps_values),
        noise_cv=noise, cpu_noise_cv=cpu_noise,
        min_difference=min_detectable_difference(noise, repeats) if noise is not None and repeats else None,
        repeats_for_5pct=repeats_needed(noise, TARGET_DIFFERENCE) if noise is not None else None,
        cpu_min_difference=min_detectable_difference(cpu_noise, repeats) if cpu_noise is not None and repeats
        else None,
        cpu_repeats_for_5pct=repeats_needed(cpu_noise, TARGET_DIFFERENCE) if cpu_noise is not None else None,
        cpu_us_per_req_a=cpu_a, cpu_us_per_req_b=cpu_b,
        expected_slowdown=extra_us / (cpu_a + extra_us) if cpu_a else None,
        ab_ratio=b.rps / a.rps if a.rps and b.rps else None, ab_ratio_ci=ab_ci,
        detected=None if ab_ci is None else ab_ci[1] < 1.0,
    )
