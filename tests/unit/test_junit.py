"""JUnit XML of committed gate runs and of a run with an invalid window, read back as CI reads it."""

from __future__ import annotations

import dataclasses
import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pywebbench.analyze.gate import Gate, GateFigure, GateRow, GateVerdict, head_over_base
from pywebbench.analyze.paired import Interval
from pywebbench.report.junit import gate_junit, run_junit, why_invalid
from pywebbench.results.model import TrialStatus
from pywebbench.results.store import load_results

ROOT = Path(__file__).resolve().parents[2]
GATES = ROOT / "docs" / "results" / "ci-gate"
FAILING, PASSING = GATES / "one-run-20us" / "1", GATES / "one-run-0us" / "1"
INVALID = ROOT / "docs" / "results" / "rankings" / "catalog-even" / "results.jsonl"
HOSTILE = "app:<evil>&amp;]]>\x00\x1b[2J\x07\ud800 \"quoted\" 'x'\n"


def _gate(run: Path) -> tuple[Gate, ET.Element]:
    threshold = json.loads((run / "gate.json").read_text())["threshold"]
    results = load_results(run)
    gate = head_over_base(results.trials, threshold)
    return gate, ET.fromstring(gate_junit(gate, results))


@pytest.mark.parametrize("run", [FAILING, PASSING], ids=["20us", "0us"])
def test_a_committed_gate_has_a_case_per_row_failed_where_the_gate_failed_it(run: Path) -> None:
    gate, root = _gate(run)
    suite = root.find("testsuite")
    assert suite is not None
    cases = suite.findall("testcase")
    failures = [c for c in cases if c.find("failure") is not None]
    assert len(cases) == len(gate.rows) == int(suite.get("tests", "")) == int(root.get("tests", ""))
    assert len(failures) == len(gate.regressions) == int(suite.get("failures", ""))
    assert bool(failures) == json.loads((run / "gate.json").read_text())["failed"] \
        == bool(json.loads((run / "gate-run.json").read_text())["exit"])
    for row, case in zip(gate.rows, cases, strict=True):
        assert case.get("classname") == row.stack and case.get("name") == f"{row.stack} {row.figure.value}"
        failure = case.find("failure")
        if row.verdict is GateVerdict.REGRESSION:
            assert failure is not None and failure.get("message") == row.line
            assert failure.get("type") == "regression" and row.line in (failure.text or "")
        else:
            assert failure is None and case.findtext("system-out") == row.line
    assert suite.get("timestamp", "").startswith("2026-")


def test_without_fail_on_regression_a_regression_does_not_fail_its_case() -> None:
    gate = head_over_base(load_results(FAILING).trials, 0.005)
    root = ET.fromstring(gate_junit(gate, fails=False))
    assert root.get("failures") == "0" and gate.failed


def test_a_row_without_an_interval_is_skipped_with_its_reason() -> None:
    row = GateRow("app:x", GateFigure.RPS, None, GateVerdict.NO_INTERVAL, why_none="one launch")
    case = ET.fromstring(gate_junit(Gate(0.02, (row,)))).find("testsuite/testcase")
    assert case is not None and case.find("failure") is None
    skipped = case.find("skipped")
    assert skipped is not None and "one launch" in skipped.get("message", "")


def test_an_invalid_window_fails_its_stack_and_workload_with_the_check_line() -> None:
    results = load_results(INVALID)
    bad = [t for t in results.trials if not t.valid]
    assert len(bad) == 1 and bad[0].checks[0].startswith("errors: ")
    root = ET.fromstring(run_junit(results))
    failed = [c for c in root.iter("testcase") if c.find("failure") is not None]
    assert root.get("failures") == "1" and len(failed) == 1
    failure = failed[0].find("failure")
    assert failure is not None and failure.get("message") == bad[0].checks[0] == why_invalid(bad[0])
    assert failed[0].get("name") == f"{bad[0].spec.label} {bad[0].spec.workload}"
    assert bad[0].spec.trial_id in (failure.text or "")
    assert len(list(root.iter("testcase"))) == len({(t.spec.label, t.spec.workload) for t in results.trials})


def test_a_failed_status_is_the_line_with_its_error() -> None:
    trial = dataclasses.replace(load_results(INVALID).trials[0], status=TrialStatus.SERVER_FAILED,
                                error="worker died\ntraceback ...")
    assert why_invalid(trial) == "server-failed: worker died"


def test_hostile_strings_from_a_results_file_round_trip_safely() -> None:
    interval = Interval(0.9, 0.8, 0.95, 10, 4, 0.02)
    row = GateRow(HOSTILE, GateFigure.RPS, interval, GateVerdict.REGRESSION)
    text = gate_junit(Gate(0.05, (row, dataclasses.replace(row, figure=GateFigure.P99,
                                                           verdict=GateVerdict.EQUIVALENT))))
    root = ET.fromstring(text)  # parses: nothing XML cannot hold was written raw
    assert "<evil>" not in text and "]]>" not in text and "\x00" not in text and "\x1b" not in text
    cases = list(root.iter("testcase"))
    assert len(cases) == 2 and root.get("failures") == "1"
    shown = HOSTILE.replace("\x00", "\\x00").replace("\x1b", "\\x1b").replace("\x07", "\\x07") \
        .replace("\ud800", "\\ud800")
    assert cases[0].get("classname") == shown
    failure = cases[0].find("failure")
    assert failure is not None and failure.get("message", "").startswith(shown)
    assert (failure.text or "").startswith(shown)
