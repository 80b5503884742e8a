"""How much this machine can tell apart, proved: an A/A that brackets 1, a known slowdown seen.

One stack runs under three names with the method being calibrated: A, A again (A2), and B,
the same app spending a known amount of extra CPU per request. The amount is sized in the
run itself, by the method being calibrated (a duet's spin beside its partner): a short sizing
phase measures A's CPU per request (from its cgroup) and B gets
enough extra work to be `slowdown` slower if the stack is CPU-bound (5% by default). A/A
says how far two identical stacks differ (the noise, and any bias of the method); A/B
whether the known slowdown is detected; `mde` how small a difference the rounds spent can
detect at 80% power.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import asdict, dataclass
from typing import Any

from scipy.special import ndtri, stdtr

from pywebbench.analyze.calibrate_probe import (
    EXTRA_SHARE_ENV, EXTRA_WORK_ENV, PROBE_ALIAS, ExpectedFrom, expected_from_probe, probe_read,
)
from pywebbench.analyze.calibrate_sizing import reciprocal, unpaired_cpu_ratio
from pywebbench.analyze.rows import Row, summarize
from pywebbench.catalog.registry import Catalog
from pywebbench.core.errors import UserError
from pywebbench.analyze.moderation import satterthwaite_df, t_quantile
from pywebbench.analyze.paired import Interval, min_detectable
from pywebbench.plan.knob_values import window_seconds
from pywebbench.plan.sessions import Variant
from pywebbench.results.model import ResultSet

DEFAULT_SLOWDOWN = 0.05


def loops_per_us() -> float:
    """Iterations of the app's empty loop one microsecond of this CPU runs here (best of 7):
    stacks run on this same interpreter version, so a count means the same work there."""
    best = float("inf")
    for _ in range(7):
        start = time.process_time()
        for _ in range(LOOP_PROBE):
            pass
        best = min(best, time.process_time() - start)
    return LOOP_PROBE / (best * 1e6) if best > 0 else 50.0


LOOP_PROBE = 1_000_000


def calibration_variants(catalog: Catalog, stack_id: str, extra_loops: int,
                         share: float = 1.0, probe_loops: int | None = None) -> tuple[Variant, ...]:
    """A, A2 and B; with `probe_loops`, P too: the probe run in the main phase's rounds
    (analyze/calibrate_probe.py), from which B's expected ratio is read in its own minutes."""
    stack = catalog.resolve(stack_id)
    if stack.unavailable:
        raise UserError(f"{stack.id} is unavailable here: {stack.unavailable}")
    if stack.server.native is not None:
        raise UserError(f"calibrate needs a Python stack (its app adds the known work), not {stack.id}")
    work: tuple[tuple[str, str], ...] = ((EXTRA_WORK_ENV, str(extra_loops)),)
    if share < 1.0:
        work += ((EXTRA_SHARE_ENV, f"{share:.6f}"),)
    variants = (Variant(stack, "A"), Variant(stack, "A2"), Variant(stack, "B", work))
    if probe_loops is None:
        return variants
    return variants + (Variant(stack, PROBE_ALIAS, ((EXTRA_WORK_ENV, str(probe_loops)),)),)


SIZING_PROBE_US = 100.0
"""The extra work B gets in the sizing phase (nominal): a third to three fifths more CPU per
request on flask:gunicorn-sync (by the machine's speed), so that a window's noise moves its
measured cost by little. With a
40 us probe and 3 rounds the cost came out 1.5x off and B was 7.4% slower instead of 5%."""


def sizing_variants(catalog: Catalog, stack_id: str, per_us: float) -> tuple[Variant, ...]:
    a, _, b = calibration_variants(catalog, stack_id, round(SIZING_PROBE_US * per_us))
    return a, b


@dataclass(frozen=True)
class Sizing:
    """What the sizing phase read, and the loops B gets from it."""

    loops: int
    cpu_a_us: float
    """A's CPU per request in the sizing windows."""
    per_loop_us: float
    """What one loop cost the running app (B's probe over A, by the kernel's CPU time)."""
    probe_loops: int
    probe_ratio: Interval | None
    """B's CPU per request over A's in the sizing windows (the probe), with its interval: A's and
    B's own errors over the launches, not the paired one (analyze/calibrate_sizing.py)."""
    share: float = 1.0
    """The share of B's requests that spin `loops`: 1 (every request) since the new stacks' runs showed a
    share costing event loops more (size_extra_work); below 1 in interleaved runs 28-64 and duet 25-26."""


def share_words(share: float) -> str:
    """Which of B's requests spin its loops, in words."""
    return "every request" if share >= 1.0 else f"{share:.2%} of its requests"


def size_extra_work(results: ResultSet, slowdown: float, probe_loops: int) -> Sizing:
    """B's extra work, from A's CPU per request and what the probe cost the app in the sizing run.

    Makes a CPU-bound stack `slowdown` slower in req/s: its CPU per request t must grow to
    t / (1 - s), by t * s / (1 - s). A loop costs the running app more than it costs in a
    tight timing loop (1.6-2.4x here: caches, queueing), so the sizing run loads A and B with
    a probe and reads what the kernel saw the probe cost; B spins the loops that cost makes s,
    on every request. Interleaved runs 28-64 spun the probe's own loops on a share of B's
    requests instead (so no loop count was extrapolated), but a rare long request costs an
    event loop more than its loops: fastapi:uvicorn's B spent 11.0% more CPU per request than A
    where 2.0% was sized (calibrate-new-stacks/interleaved/3); spread over every request, 2.5%
    against 2.0% (calibrate-new-stacks/spread-check). With P in the main phase (interleaved) the
    expected value reads the loop's cost in B's own rounds, so the loop count is scaled by P's
    measured cost, not assumed.
    """
    rows = {r.spec.alias: r for r in summarize(results).rows}
    a, b = rows.get("A"), rows.get("B")
    if a is None or b is None or a.cpu_ms_per_req is None or b.cpu_ratio is None:
        raise UserError("the sizing run measured no CPU per request for A and B (see its logs)")
    cpu_a_us = a.cpu_ms_per_req * 1000
    probe = unpaired_cpu_ratio(results, b.cpu_ratio_interval)
    per_loop_us = max(1e-4, cpu_a_us * (b.cpu_ratio - 1.0) / probe_loops)
    share = cpu_a_us * slowdown / (1.0 - slowdown) / (per_loop_us * probe_loops)
    return Sizing(max(1, round(probe_loops * share)), cpu_a_us, per_loop_us, probe_loops, probe)


def expected_ab(sizing: Sizing) -> Interval | None:
    """The B/A req/s ratio the loops should give a CPU-bound stack, with its interval.

    B spends t (1 + k (r - 1)) per request, with r the probe's CPU ratio in the sizing windows
    and k = share x loops / probe loops (A's own cost t cancels), so B/A = 1 / (1 + k (r - 1)). Its
    interval carries the sizing windows' uncertainty in r (the delta method on the log). These
    are other windows than the main phase's, so the expected value is a check on B/A, not a
    restatement of it (B's CPU per request in the same windows would be: it is CPU share / req/s).
    """
    return expected_from_probe(sizing.probe_ratio, sizing.share * sizing.loops / sizing.probe_loops)


def holds(observed: Interval | None, expected: Interval | None, confidence: float = 0.95) -> bool | None:
    """Whether B/A agrees with the expected ratio, both uncertain: their log difference within
    the t quantile of its combined error, on Satterthwaite's degrees of freedom (the smaller
    side's alone made a narrow expected value on 2 df decide the quantile of a sum that the
    observed side's 9 df dominate: t = 4.3 where 2.25 was due)."""
    if observed is None or expected is None:
        return None
    gap, se, df = _log_gap(observed, expected)
    if se <= 0:
        return gap == 0
    return abs(gap) <= t_quantile(df, confidence) * se


def _log_gap(observed: Interval, expected: Interval) -> tuple[float, float, float]:
    """log(observed / expected), its standard error with both sides' errors, and Satterthwaite's df."""
    own, lent = observed.se_log ** 2, expected.se_log ** 2
    return (math.log(observed.center) - math.log(expected.center), math.sqrt(own + lent),
            satterthwaite_df((own, observed.df), (lent, expected.df)))


EXACTLY_ONE = Interval(center=1.0, low=1.0, high=1.0, n_rounds=0, n_launches=0, se_log=0.0)
"""The A/A truth: known without error."""


def normal_score(observed: Interval | None, expected: Interval | None) -> float | None:
    """log(observed / expected) over its combined standard error, carried through the t
    distribution of its Satterthwaite df to a standard normal score. Across runs whose intervals
    have the right width and no bias, the scores have mean 0 and RMS 1 (a t score on few df would
    not: its variance is df / (df - 2)); a score beyond +-1.96 is a run whose interval missed."""
    if observed is None or expected is None:
        return None
    gap, se, df = _log_gap(observed, expected)
    if se <= 0:
        return None
    tail = float(stdtr(df if math.isfinite(df) else 1e9, gap / se))
    return float(ndtri(min(max(tail, 1e-15), 1.0 - 1e-15)))


@dataclass(frozen=True)
class Calibration:
    stack: str
    method: str
    rounds: int
    launches: int
    window_s: float
    settle_s: float
    wall_s: float
    cpu_source: str
    rps_a: float | None
    aa_ratio: float | None
    aa_ci: tuple[float, float] | None
    aa_contains_one: bool | None
    ab_ratio: float | None
    ab_ci: tuple[float, float] | None
    injected_slowdown: float
    """The B variant's expected req/s slowdown as a fraction, if A is CPU-bound."""
    extra_loops: int
    """Iterations of an empty loop B adds to a request, sized from A's measured CPU per request
    and what a loop cost the app in the sizing run."""
    extra_us: float
    """B's extra work per request on average, in microseconds of a tight timing loop in the harness (nominal)."""
    loop_cost_us: float | None
    """CPU microseconds one loop cost the running app in the sizing run."""
    detected: bool | None
    """The A/B interval excludes 1: the known slowdown was seen."""
    mde: float | None
    """Smallest difference detectable at 95% confidence and 80% power with the rounds spent."""
    cpu_us_per_req_a: float | None
    cpu_us_per_req_b: float | None
    injected_measured_us: float | None
    """B's CPU per request minus A's in the same rounds: the check that B spent what it was given."""
    cpu_aa_ratio: float | None
    cpu_aa_ci: tuple[float, float] | None
    cpu_ab_ratio: float | None
    cpu_ab_ci: tuple[float, float] | None
    ab_within_expected: bool | None
    """The A/B interval holds 1 - injected_slowdown (the nominal size)."""
    extra_share: float = 1.0
    """The share of B's requests that spin extra_loops (1: every request)."""
    ab_expected: float | None = None
    """The B/A the loops should give, with its interval: from P's CPU ratio in the main phase's
    own rounds where the run had the probe there (calibrate_probe), else from the sizing windows."""
    ab_expected_ci: tuple[float, float] | None = None
    ab_holds_expected: bool | None = None
    """B/A agrees with ab_expected: the size of the effect is right. Same windows: the per-round
    gap's interval holds 1; from sizing: both intervals' errors combined."""
    aa_score: float | None = None
    """log(A2/A) as a normal score (normal_score): judged across runs, not within one."""
    ab_expected_score: float | None = None
    """log(B/A / ab_expected) as a normal score, with the errors ab_holds_expected uses."""
    ab_gap: float | None = None
    """B/A over ab_expected (same windows: the per-round gap's centre), averaged across runs on the page."""
    ab_expected_from: ExpectedFrom = ExpectedFrom.SIZING
    ab_sized: float | None = None
    """The B/A the sizing windows expected (expected_ab), kept beside a same-window expectation."""
    ab_sized_ci: tuple[float, float] | None = None
    ab_holds_sized: bool | None = None
    ab_sized_score: float | None = None
    cpu_ab_sized: float | None = None
    """B's CPU per request over A's that the sizing windows expected (1 / ab_sized), to set
    beside cpu_ab_ratio, the one B showed in the main phase's rounds."""
    cpu_ab_sized_ci: tuple[float, float] | None = None
    cpu_ab_holds_sized: bool | None = None
    """B's measured CPU ratio agrees with cpu_ab_sized, both errors combined (holds)."""
    measured_share: float | None = None
    """Measured windows (sizing and main phase) as a fraction of the command's wall time."""
    main_measured_share: float | None = None
    """The same for the main phase alone: what a warm `run` of three stacks spends measuring."""
    main_phases: dict[str, float] | None = None
    """Where the main phase's wall time went (seconds per phase, the harness's own as `other (harness)`)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)


def _row(rows: list[Row], alias: str) -> Row | None:
    return next((r for r in rows if r.spec.alias == alias), None)


def _rounded(score: float | None) -> float | None:
    return None if score is None else round(score, 4)


def _pair(ci: tuple[float, float] | None) -> tuple[float, float] | None:
    return None if ci is None else (round(ci[0], 5), round(ci[1], 5))


def calibrate_report(results: ResultSet, *, extra_loops: int, extra_us: float, slowdown: float, wall_s: float,
                     extra_share: float = 1.0,
                     loop_cost_us: float | None = None, expected: Interval | None = None,
                     measured_share: float | None = None,
                     main_measured_share: float | None = None,
                     main_phases: dict[str, float] | None = None) -> Calibration:
    rows = list(summarize(results, baseline=_baseline(results)).rows)
    a, a2, b = _row(rows, "A"), _row(rows, "A2"), _row(rows, "B")
    if a is None or a2 is None or b is None:
        raise UserError("the calibration run has no result for A, A2 or B (see the run's log)")
    mdes = [min_detectable(r.ratio_interval) for r in (a2, b) if r.ratio_interval is not None]
    cpu_a = a.cpu_ms_per_req * 1000 if a.cpu_ms_per_req is not None else None
    cpu_b = b.cpu_ms_per_req * 1000 if b.cpu_ms_per_req is not None else None
    injected = cpu_a * (b.cpu_ratio - 1.0) if cpu_a is not None and b.cpu_ratio is not None else None
    nominal = 1.0 - slowdown
    return Calibration(
        stack=a.stack.id, method=a.method, rounds=min(r.rounds for r in (a, a2, b)),
        launches=max(r.launches for r in (a, a2, b)), window_s=window_seconds(a.spec), settle_s=a.spec.settle_s,
        wall_s=round(wall_s, 1), cpu_source=a.cpu_source, rps_a=a.rps,
        aa_ratio=a2.ratio, aa_ci=_pair(a2.ratio_ci),
        aa_contains_one=None if a2.ratio_ci is None else a2.ratio_ci[0] <= 1.0 <= a2.ratio_ci[1],
        ab_ratio=b.ratio, ab_ci=_pair(b.ratio_ci), injected_slowdown=slowdown, extra_loops=extra_loops,
        extra_us=round(extra_us, 2), loop_cost_us=loop_cost_us,
        detected=None if b.ratio_ci is None else b.ratio_ci[1] < 1.0,
        mde=max(mdes) if mdes else None,
        cpu_us_per_req_a=cpu_a, cpu_us_per_req_b=cpu_b, injected_measured_us=injected,
        cpu_aa_ratio=a2.cpu_ratio, cpu_aa_ci=_pair(a2.cpu_ratio_ci),
        cpu_ab_ratio=b.cpu_ratio, cpu_ab_ci=_pair(b.cpu_ratio_ci),
        ab_within_expected=None if b.ratio_ci is None else b.ratio_ci[0] <= nominal <= b.ratio_ci[1],
        extra_share=extra_share, **_expectations(results, rows, b, expected),
        aa_score=_rounded(normal_score(a2.ratio_interval, EXACTLY_ONE)),
        measured_share=None if measured_share is None else round(measured_share, 4),
        main_measured_share=None if main_measured_share is None else round(main_measured_share, 4),
        main_phases=None if main_phases is None else {k: round(v, 1) for k, v in main_phases.items()},
    )



def _expectations(results: ResultSet, rows: list[Row], b: Row, sized: Interval | None) -> dict[str, Any]:
    """The ab_expected fields: from P in the main phase's own rounds where the run had it (the
    per-round gap's interval judges B/A), else from the sizing windows; the ab_sized ones always."""
    def ci(interval: Interval | None) -> tuple[float, float] | None:
        return None if interval is None else _pair((interval.low, interval.high))

    def centre(interval: Interval | None) -> float | None:
        return None if interval is None else round(interval.center, 5)

    cpu = reciprocal(sized)
    by_sizing = dict(ab_sized=centre(sized), ab_sized_ci=ci(sized), ab_holds_sized=holds(b.ratio_interval, sized),
                     ab_sized_score=_rounded(normal_score(b.ratio_interval, sized)),
                     cpu_ab_sized=centre(cpu), cpu_ab_sized_ci=ci(cpu),
                     cpu_ab_holds_sized=holds(b.cpu_ratio_interval, cpu))
    read, probe = probe_read(results), _row(rows, PROBE_ALIAS)
    if probe is None or read is None:
        gap_by_sizing = None if sized is None or b.ratio is None else round(b.ratio / sized.center, 5)
        return by_sizing | dict(ab_expected=centre(sized), ab_expected_ci=ci(sized), ab_gap=gap_by_sizing,
                                ab_holds_expected=by_sizing["ab_holds_sized"],
                                ab_expected_score=by_sizing["ab_sized_score"])
    expected, gap = expected_from_probe(probe.cpu_ratio_interval, read.k), read.gap
    return by_sizing | dict(ab_expected=centre(expected), ab_expected_ci=ci(expected),
                            ab_holds_expected=None if gap is None else gap.low <= 1.0 <= gap.high,
                            ab_expected_score=_rounded(normal_score(gap, EXACTLY_ONE)), ab_gap=centre(gap),
                            ab_expected_from=ExpectedFrom.SAME_WINDOWS)


def _baseline(results: ResultSet) -> str:
    stored = results.header.options.get("baseline")
    if isinstance(stored, str) and stored:
        return stored
    first = next((t for t in results.trials if t.spec.alias == "A"), None)
    if first is None:
        raise UserError("the calibration run has no result for A")
    return first.spec.label
