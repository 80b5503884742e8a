"""docs/method.md's check on calibrate's sizing: does a loop of the injected work cost the app
in the main phase what the sizing phase read from its probe (100 us nominal)? Until interleaved
run 27 B spun about a tenth of the probe's loops on every request, where a cost per request that
does not scale with the loops (the call, a cache refill) would make B slower than expected;
since then it spins the probe's own loops on a share of its requests. Each design is shown apart.

Read from committed files only: the interleaved calibrate runs (sizing per loop, main phase per
loop) and `calibrate --extra-us 100` runs under docs/results/calibrate-probe/, whose B spins the
probe's loops in a main phase.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pywebbench.analyze.moderation import mean_half_width
from pywebbench.report.pages.calibration import CalibrationRun

SAME_SPEED = 0.2
"""Runs whose A req/s is within this share of the probe run's ran on a machine of its speed."""


@dataclass(frozen=True)
class ProbeRun:
    name: str
    loops: int
    per_loop_ns: float
    per_loop_ci_ns: tuple[float, float]
    """From B's CPU ratio's interval (A's own CPU per request taken as known)."""
    rps_a: float
    aa: str
    """Its A2/A with interval and whether it holds 1: an A/A like the table's, kept in view."""


def load_probes(root: Path) -> list[ProbeRun]:
    out = []
    for path in sorted(root.glob("*/calibration.json")) if root.is_dir() else []:
        c = json.loads(path.read_text())
        if not c.get("cpu_us_per_req_a") or not c.get("cpu_ab_ci") or not c.get("injected_measured_us"):
            continue
        loops, cpu_a = int(c["extra_loops"]), float(c["cpu_us_per_req_a"])
        low, high = (cpu_a * (r - 1.0) / loops * 1000 for r in c["cpu_ab_ci"])
        aa = (f"{c['aa_ratio']:.4f} [{c['aa_ci'][0]:.4f}, {c['aa_ci'][1]:.4f}], "
              f"{'holding' if c['aa_contains_one'] else 'missing'} 1") if c.get("aa_ci") else "no interval"
        out.append(ProbeRun(path.parent.name, loops, c["injected_measured_us"] / loops * 1000, (low, high),
                            float(c["rps_a"]), aa))
    return out


def _per_loop_ns(run: CalibrationRun) -> tuple[float, float] | None:
    """(sizing's ns per loop at the probe's size, the main phase's as B spun them)."""
    c = run.figures
    if c.loop_cost_us is None or c.injected_measured_us is None or c.extra_loops <= 0:
        return None
    return c.loop_cost_us * 1000, c.injected_measured_us / (c.extra_loops * c.extra_share) * 1000


def _mean(values: list[float]) -> str:
    """The mean with Student's t over the runs (each run one value, independent of the others)."""
    mean, half = mean_half_width(values)
    return f"{mean:.3f} [{mean - half:.3f}, {mean + half:.3f}]"


def _design(pairs: list[tuple[CalibrationRun, tuple[float, float]]], every: bool) -> str:
    loops = [r.figures.extra_loops for r, _ in pairs]
    span = f"{min(loops):,}-{max(loops):,} loops"
    if every:
        return f"B spinning {span} on every request (about a tenth of the probe's)"
    shares = [r.figures.extra_share for r, _ in pairs]
    return f"B spinning the probe's own {span} on {min(shares):.1%}-{max(shares):.1%} of its requests"


def section(runs: list[CalibrationRun], probes_root: Path) -> str:
    pairs = [(r, p) for r in runs if (p := _per_loop_ns(r)) is not None]
    parts = []
    for every in (True, False):
        group = [(r, p) for r, p in pairs if (r.figures.extra_share >= 1.0) == every]
        if len(group) < 3:
            continue
        parts.append(
            f"In the {len(group)} interleaved runs with {_design(group, every)}, a loop cost the app "
            f"{_mean([main / sizing for _, (sizing, main) in group])} times what their sizing phases read "
            "at the probe's size (B's CPU per request over A's in the main phase; the mean over the runs, "
            "Student's t: one run's figure is noisy, since a 5% slowdown moves the CPU ratio by little "
            "more than its own error).")
    text = "\n\n".join(parts) or "Too few interleaved runs with a sizing phase to compare a loop's cost."
    for probe in load_probes(probes_root):
        near = [p for r, p in pairs if r.figures.extra_share >= 1.0 and r.figures.rps_a and abs(r.figures.rps_a / probe.rps_a - 1) <= SAME_SPEED]
        if not near:
            continue
        sizing = sorted(s for s, _ in near)
        main = sorted(m for _, m in near)
        text += (f"\n\n`calibrate --extra-us 100` (`docs/results/calibrate-probe/{probe.name}`): B spins "
                 f"{probe.loops:,} loops (the sizing probe's 100 us nominal) in a main phase beside A and A2, and a loop cost the app "
                 f"{probe.per_loop_ns:.2f} ns [{probe.per_loop_ci_ns[0]:.2f}, {probe.per_loop_ci_ns[1]:.2f}]. The "
                 f"{len(near)} runs at its machine speed (A within {SAME_SPEED:.0%} of its {probe.rps_a:,.0f} req/s) "
                 f"read {sizing[0]:.2f}-{sizing[-1]:.2f} ns (median {sizing[len(sizing) // 2]:.2f}) at the probe's "
                 f"size in their sizing phases and {main[0]:.2f}-{main[-1]:.2f} ns (median {main[len(main) // 2]:.2f}) "
                 f"at B's size in their main phases. Its A2/A: {probe.aa} (the run is not in the table above, "
                 "whose B is the 5% slowdown its targets are about).")
    return text
