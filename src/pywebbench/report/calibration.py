"""What `calibrate` prints for a person: its figures in words."""

from __future__ import annotations

from pywebbench.analyze.calibrate import Calibration, share_words
from pywebbench.analyze.calibrate_probe import ExpectedFrom


def render_calibration(c: Calibration) -> str:
    """What `calibrate` prints without --json: the same figures in words."""
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v:.1%}"

    def ci(pair: tuple[float, float] | None) -> str:
        return "no interval" if pair is None else f"[{pair[0]:.3f}, {pair[1]:.3f}]"

    aa = {True: "contains 1, as it must", False: "EXCLUDES 1: the method is biased here", None: "undecided"}
    ab = {True: "the slowdown was detected", False: "NOT detected: within noise with what was spent",
          None: "undecided (fewer than 2 rounds)"}
    lines = [
        f"calibration of {c.stack} by the {c.method} method: {c.rounds} rounds in {c.launches} "
        f"launch(es), {c.window_s:g}s windows after {c.settle_s:g}s settles, {c.wall_s / 60:.1f} min; "
        f"CPU from {c.cpu_source}",
        f"  A/A: req/s ratio {c.aa_ratio or 0:.4f} {ci(c.aa_ci)}: {aa[c.aa_contains_one]}",
        f"  A/B: B spins {c.extra_loops:,} more loops on "
        + share_words(c.extra_share)
        + ", sized to slow a CPU-bound stack by "
        f"{pct(c.injected_slowdown)} (the kernel saw {c.injected_measured_us or 0:,.1f} us more); "
        f"req/s ratio {c.ab_ratio or 0:.4f} {ci(c.ab_ci)}: {ab[c.detected]}",
        _expected_line(c),
        f"  CPU per request: A {c.cpu_us_per_req_a or 0:,.0f} us; A2/A {c.cpu_aa_ratio or 0:.4f} "
        f"{ci(c.cpu_aa_ci)}, B/A {c.cpu_ab_ratio or 0:.4f} {ci(c.cpu_ab_ci)}" + _cpu_check(c),
        f"  smallest difference these rounds can detect (95% confidence, 80% power): {pct(c.mde)}",
        f"  wall time in measured windows: {pct(c.measured_share)} (main phase {pct(c.main_measured_share)})",
    ]
    return "\n".join(lines)


def _expected_line(c: Calibration) -> str:
    """The B/A the loops should give and whether B/A showed it: the accuracy, not only detection."""
    if c.ab_expected is None or c.ab_expected_ci is None:
        return "  expected B/A: not measured (no probe read in this run)"
    source = ("P, the probe, in the same rounds" if c.ab_expected_from == ExpectedFrom.SAME_WINDOWS
              else "the sizing windows")
    verdict = {True: "B/A agrees", False: "B/A DISAGREES: the effect's size is off", None: "undecided"}
    line = (f"  expected B/A {c.ab_expected:.4f} [{c.ab_expected_ci[0]:.4f}, {c.ab_expected_ci[1]:.4f}] "
            f"from {source}: {verdict[c.ab_holds_expected]}")
    if c.ab_expected_from == ExpectedFrom.SAME_WINDOWS and c.ab_sized is not None:
        line += f" (the sizing windows expected {c.ab_sized:.4f}: {verdict[c.ab_holds_sized]})"
    return line


def _cpu_check(c: Calibration) -> str:
    """B's CPU ratio in these rounds beside the one the sizing expected: where B/A misses its
    expected value, this says whether the loops cost what the sizing read or the req/s moved."""
    if c.cpu_ab_sized is None or c.cpu_ab_sized_ci is None:
        return ""
    verdict = {True: "agree", False: "DISAGREE: the loops cost the app otherwise than in the sizing",
               None: "undecided"}
    return (f"; the sizing expected B/A {c.cpu_ab_sized:.4f} [{c.cpu_ab_sized_ci[0]:.4f}, "
            f"{c.cpu_ab_sized_ci[1]:.4f}]: {verdict[c.cpu_ab_holds_sized]}")
