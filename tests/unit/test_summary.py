"""The Markdown summary of a gate, a comparison and a run; and compare writing both CI files."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from pywebbench.analyze.compare import compare_results
from pywebbench.analyze.gate import Gate, GateFigure, GateRow, GateVerdict, head_over_base
from pywebbench.report.summary import comparison_summary, gate_summary, run_summary
from pywebbench.results.store import load_results

ROOT = Path(__file__).resolve().parents[2]
GATES = ROOT / "docs" / "results" / "ci-gate"
TWO_RUN = GATES / "two-run-20us" / "1"
PYWEBBENCH = Path(sys.executable).parent / "pywebbench"


@pytest.mark.parametrize("run", [GATES / "one-run-20us" / "1", GATES / "one-run-0us" / "1"], ids=["20us", "0us"])
def test_the_first_line_says_pass_or_fail_as_the_gate_did(run: Path) -> None:
    results = load_results(run)
    gate = head_over_base(results.trials, json.loads((run / "gate.json").read_text())["threshold"])
    text = gate_summary(gate, results.header.command)
    exited = json.loads((run / "gate-run.json").read_text())["exit"]
    first = text.splitlines()[0]
    assert first.startswith("## pywebbench gate: " + ("FAIL" if exited else "PASS"))
    assert "| Stack | Figure | head/base | 95% interval |" in text
    for row in gate.rows:
        assert row.interval is not None and f"[{row.interval.low:.4f}, {row.interval.high:.4f}]" in text
    assert "--baseline-ref" in text and "```sh" in text
    assert "HTML report" not in text and "noise" not in text.lower()


def test_a_run_that_failed_otherwise_reads_fail_and_a_written_report_is_linked() -> None:
    row = GateRow("app:x", GateFigure.RPS, None, GateVerdict.NO_INTERVAL, why_none="one launch")
    text = gate_summary(Gate(0.02, (row,)), ("pywebbench", "app"), code=1, html="runs/gate/report.html")
    assert text.startswith("## pywebbench gate: FAIL") and "exit 1" in text.splitlines()[0]
    assert text.rstrip().endswith("[The HTML report](runs/gate/report.html)")


def test_a_command_with_backticks_cannot_close_its_fence() -> None:
    text = gate_summary(Gate(0.02, ()), ("pywebbench", "```` injected `x`"))
    fence = next(line for line in text.splitlines() if line.startswith("`") and line.endswith("sh"))
    assert fence == "`" * 5 + "sh" and text.rstrip().endswith("`" * 5)


def test_the_comparison_names_each_interval_and_its_regressions() -> None:
    comparison = compare_results(load_results(TWO_RUN / "base.jsonl"), load_results(TWO_RUN / "head.jsonl"))
    text = comparison_summary(comparison, 0.005, ("pywebbench", "compare"))
    assert text.startswith("## pywebbench compare: FAIL (3 regression(s) past ±0.5%)")
    assert "req/s [0.948, 0.980], p99 [1.007, 1.095], CPU/req [1.020, 1.054]" in text
    assert comparison_summary(comparison, None, ()).startswith("## pywebbench compare: PASS (not judged")


def test_a_run_summary_passes_with_its_exit_code() -> None:
    results = load_results(ROOT / "docs" / "results" / "rankings" / "catalog-even" / "results.jsonl")
    assert run_summary(results, results.header.command, code=1).startswith("## pywebbench run: FAIL (1 of ")
    assert run_summary(results, (), code=0).startswith("## pywebbench run: PASS")


def test_compare_writes_the_junit_and_the_summary(tmp_path: Path) -> None:
    junit, summary = tmp_path / "gate.xml", tmp_path / "gate.md"
    done = subprocess.run([str(PYWEBBENCH), "compare", str(TWO_RUN / "base.jsonl"), str(TWO_RUN / "head.jsonl"),
                           "--fail-on-regression", "5%", "--junit", str(junit), "--summary", str(summary)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr  # -3.8% req/s does not pass a 5% gate; the code is compare's own
    root = ET.fromstring(junit.read_text())
    assert root.get("tests") == "3" and root.get("failures") == "0"
    assert summary.read_text().startswith("## pywebbench compare: PASS (0 regression(s) past ±5.0%)")
    assert "--junit" in summary.read_text()
    failing = subprocess.run([str(PYWEBBENCH), "compare", str(TWO_RUN / "base.jsonl"), str(TWO_RUN / "head.jsonl"),
                              "--fail-on-regression", "1%", "--junit", str(junit)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert failing.returncode == 1 and ET.fromstring(junit.read_text()).get("failures") == "3"


def test_a_missing_folder_is_refused_before_anything_starts(tmp_path: Path) -> None:
    done = subprocess.run([str(PYWEBBENCH), "compare", str(TWO_RUN / "base.jsonl"), str(TWO_RUN / "head.jsonl"),
                           "--junit", str(tmp_path / "no" / "such.xml")], capture_output=True, text=True,
                          timeout=120, check=False)
    assert done.returncode == 2 and "does not exist" in done.stderr
