"""JUnit XML of a gate, a comparison or a run: what CI's test reporters read (GitHub Actions'
reporters, GitLab, Jenkins), in the de-facto Ant/Jenkins schema.

One test case per verdict: a gate row (stack x figure), a compared figure (stack x workload x
figure), or a run's stack x workload. A case fails where the command's exit code does: a
regression the gate judged, or a run's invalid window. Every string comes from a results file,
which is untrusted: ElementTree escapes markup, and characters XML 1.0 cannot hold at all
(control characters, lone surrogates) are written as \\xNN, so a hostile label never makes the
file unreadable.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from pywebbench.analyze.compare import CapacityChange, Change, Comparison, Regression
from pywebbench.analyze.gate import Gate, GateRow, GateVerdict
from pywebbench.analyze.rows import latest_trials
from pywebbench.measure.checks import Check, check_name
from pywebbench.plan.knobs import knob_labels
from pywebbench.report.common import escaped
from pywebbench.results.model import ResultSet, TrialResult, TrialStatus

# XML 1.0 has no way to write these, escaped or not; C1 controls are legal but as unwelcome in a log.
_UNWRITABLE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")


def clean(text: str) -> str:
    """Text XML 1.0 can hold: each character it cannot shown as \\xNN (\\uNNNN)."""
    return escaped(_UNWRITABLE, text)


@dataclass(frozen=True)
class Case:
    classname: str
    name: str
    time_s: float = 0.0
    failure: str | None = None
    """The failure's message, one sentence; None: not failed."""
    kind: str = ""
    """The failure's type (regression, errors, server-failed, ...)."""
    detail: str = ""
    """The failure's text, or the skip's reason."""
    skipped: str | None = None
    """Why no verdict was reached (a row without an interval); None: judged."""
    output: str = ""
    """What was measured, as the terminal says it (system-out)."""


@dataclass(frozen=True)
class Suite:
    name: str
    cases: tuple[Case, ...]
    timestamp: str | None = None
    """ISO 8601 in UTC without an offset (the schema's form); None: unknown."""
    time_s: float = 0.0


def junit_xml(suite: Suite) -> str:
    """The suite as a <testsuites> document of one <testsuite>."""
    counts = {"tests": str(len(suite.cases)), "failures": str(sum(c.failure is not None for c in suite.cases)),
              "errors": "0", "skipped": str(sum(c.failure is None and c.skipped is not None for c in suite.cases)),
              "time": f"{suite.time_s:.3f}"}
    root = ET.Element("testsuites", {"name": "pywebbench", **counts})
    attributes = {"name": clean(suite.name), **counts}
    if suite.timestamp is not None:
        attributes["timestamp"] = suite.timestamp
    element = ET.SubElement(root, "testsuite", attributes)
    for case in suite.cases:
        _case(element, case)
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


def _case(parent: ET.Element, case: Case) -> None:
    element = ET.SubElement(parent, "testcase", {"classname": clean(case.classname), "name": clean(case.name),
                                                 "time": f"{case.time_s:.3f}"})
    if case.failure is not None:
        failure = ET.SubElement(element, "failure", {"message": clean(case.failure), "type": clean(case.kind)})
        failure.text = clean(case.detail or case.failure)
    elif case.skipped is not None:
        ET.SubElement(element, "skipped", {"message": clean(case.skipped)})
    if case.output:
        ET.SubElement(element, "system-out").text = clean(case.output)


def timestamp(text: str) -> str | None:
    """A results file's ISO time in the schema's form (UTC, no offset); None when unreadable."""
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc).replace(tzinfo=None)
    return moment.strftime("%Y-%m-%dT%H:%M:%S")


def _measured_s(trials: Sequence[TrialResult]) -> float:
    return sum(t.load.duration_s for t in trials if t.load is not None)


# --- a gate: head over base in one run ---


def gate_cases(gate: Gate, results: ResultSet | None = None, fails: bool = True) -> tuple[Case, ...]:
    """A case per row; its time is the measured seconds of the stack's windows, both versions.
    Without `fails` (no --fail-on-regression: the gate did not fail the run) a regression passes,
    its sentence kept in the case's output."""
    trials = latest_trials(results.trials) if results is not None else ()
    return tuple(_gate_case(row, gate.threshold, _measured_s([t for t in trials if t.spec.stack_id == row.stack]),
                            fails) for row in gate.rows)


def _gate_case(row: GateRow, threshold: float, seconds: float, fails: bool) -> Case:
    name = f"{row.stack} {row.figure.value}"
    if row.verdict is GateVerdict.REGRESSION and fails:
        side = "below" if row.figure.higher_is_better else "above"
        bound = 1.0 - threshold if row.figure.higher_is_better else 1.0 + threshold
        why = f"the gate fails a figure whose whole 95% interval lies {side} {bound:.4f} (±{threshold:.1%})"
        return Case(row.stack, name, seconds, row.line, "regression", f"{row.line}\n{why}")
    if row.verdict is GateVerdict.NO_INTERVAL:
        return Case(row.stack, name, seconds, skipped=row.line, output=row.line)
    return Case(row.stack, name, seconds, output=row.line)


def gate_junit(gate: Gate, results: ResultSet | None = None, *, fails: bool = True) -> str:
    header = results.header if results is not None else None
    title = f"pywebbench gate (head/base at ±{gate.threshold:.1%})" + (f" {header.run_id}" if header else "")
    cases = gate_cases(gate, results, fails)
    return junit_xml(Suite(title, cases, timestamp(header.created_at) if header else None,
                           _measured_s(latest_trials(results.trials)) if results is not None else 0.0))


# --- compare: two finished runs ---


def _compared_figures(c: Change) -> tuple[tuple[str, str], ...]:
    """(figure, what it read) of one compared row, as after/before."""
    def reading(before: float | None, after: float | None, ci: tuple[float, float] | None, fmt: str) -> str:
        values = "-" if before is None or after is None else f"{before:{fmt}} -> {after:{fmt}}"
        return values + ("" if ci is None else f", 95% interval of after/before [{ci[0]:.3f}, {ci[1]:.3f}]")
    return (("req/s", reading(c.rps_before, c.rps_after, c.ratio_ci, ",.0f") + f": {c.verdict}"),
            ("p99", reading(c.p99_before, c.p99_after, c.p99_ci, ".1f") + " ms"),
            ("CPU/req", reading(c.cpu_before, c.cpu_after, c.cpu_ci, ".3f") + " ms"))


def comparison_cases(comparison: Comparison, threshold: float | None) -> tuple[Case, ...]:
    """A case per row and figure (and tuning capacity); failed where `regressions` names it.
    Without a threshold nothing was judged, so nothing fails."""
    found = comparison.regressions(threshold) if threshold is not None else ()
    cases: list[Case] = []
    for c in comparison.changes:
        for figure, reading in _compared_figures(c):
            cases.append(_compared_case(c, figure, f"{c.stack} {c.workload} ({c.knobs}): {figure} {reading}", found))
    for cap in comparison.capacities:
        cases.append(_compared_case(cap, "capacity", f"{cap.stack} {cap.knobs}: {cap.before} -> {cap.after}", found))
    return tuple(cases)


def _compared_case(change: Change | CapacityChange, figure: str, reading: str,
                   found: Sequence[Regression]) -> Case:
    name = f"{change.stack} {change.workload} ({change.knobs}) {figure}"
    hit = next((r for r in found if r.change is change and r.figure == figure), None)
    if hit is None:
        return Case(change.stack, name, output=reading)
    return Case(change.stack, name, failure=f"regression: {hit.line}", kind="regression",
                detail=f"regression: {hit.line}\n{reading}", output=reading)


def comparison_junit(comparison: Comparison, threshold: float | None, after: ResultSet | None = None) -> str:
    title = f"pywebbench compare {comparison.before} -> {comparison.after}"
    when = timestamp(after.header.created_at) if after is not None else None
    return junit_xml(Suite(title, comparison_cases(comparison, threshold), when))


# --- a run: each stack x workload, failed by an invalid window ---


def why_invalid(trial: TrialResult) -> str:
    """The line that makes a window invalid: its status and error, or its errors check."""
    if trial.status is not TrialStatus.OK:
        first = (trial.error or "").strip().splitlines()
        return f"{trial.status.value}: {first[0]}" if first else trial.status.value
    errors = next((c for c in trial.checks if check_name(c) == Check.ERRORS), None)
    if errors is not None:
        return errors
    if trial.load is None:
        return "no load result was recorded"
    return f"errors: {trial.load.errors} of {trial.load.requests}" if trial.load.errors else "errors: no request completed"


def run_cases(results: ResultSet) -> tuple[Case, ...]:
    groups: dict[tuple[str, str, object], list[TrialResult]] = {}
    for trial in latest_trials(results.trials):
        groups.setdefault((trial.spec.label, trial.spec.workload, trial.spec.cell), []).append(trial)
    cells_of: dict[tuple[str, str], int] = {}
    for label, workload, _cell in groups:
        cells_of[(label, workload)] = cells_of.get((label, workload), 0) + 1
    cases = []
    for (label, workload, _cell), trials in sorted(groups.items(), key=lambda kv: kv[0][:2]):
        name = f"{label} {workload}"
        if cells_of[(label, workload)] > 1:  # a sweep: the knobs tell its cases apart
            name += f" ({', '.join(knob_labels(trials[0].spec, omit=('stack_cpus',)))})"
        cases.append(_run_case(label, name, trials))
    return tuple(cases)


def _run_case(label: str, name: str, trials: Sequence[TrialResult]) -> Case:
    seconds = _measured_s(trials)
    bad = [t for t in trials if not t.valid]
    measured = f"{len(trials)} window(s), {len(bad)} invalid"
    if not bad:
        return Case(label, name, seconds, output=measured)
    lines = [f"{t.spec.trial_id} (round {t.spec.round}): {why_invalid(t)}" for t in bad]
    return Case(label, name, seconds, failure=why_invalid(bad[0]), kind=bad[0].status.value
                if bad[0].status is not TrialStatus.OK else Check.ERRORS.value,
                detail="\n".join([f"{len(bad)} of {len(trials)} window(s) invalid:", *lines]), output=measured)


def run_junit(results: ResultSet) -> str:
    header = results.header
    return junit_xml(Suite(f"pywebbench {header.options.get('job') or 'run'} {header.run_id}", run_cases(results),
                           timestamp(header.created_at), _measured_s(latest_trials(results.trials))))
