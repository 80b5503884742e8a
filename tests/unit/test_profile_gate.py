"""The gate with profiles on both sides: base and head paired, the differential flame graph written,
the ten functions whose share changed most in the summary, and the one that grew most named on a
failure (app --baseline-* in one run; compare across two)."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from dataclasses import replace
from pathlib import Path

from pywebbench.analyze.gate import Gate, GateFigure, GateRow, GateVerdict
from pywebbench.analyze.profile_pairs import compare_pairs, gate_pairs
from pywebbench.profile.stacks import Stacks, compact
from pywebbench.report.profile_diff import changes_markdown, profile_lines, write_diff_flames
from pywebbench.report.summary import gate_summary
from pywebbench.results.model import ProfileRecord
from pywebbench.results.store import ResultsWriter, results_path
from support.builders import header, trial
from support.profiles import profile

PYWEBBENCH = Path(sys.executable).parent / "pywebbench"
BASE_STACKS = Stacks.of({("main (gunicorn/app.py)", "handle (notes.py)", "render (notes.py)"): 70,
                         ("main (gunicorn/app.py)", "handle (notes.py)", "dumps (json/encoder.py)"): 10,
                         ("main (gunicorn/app.py)", "send (libc.so.6)"): 20})
HEAD_STACKS = Stacks.of({("main (gunicorn/app.py)", "handle (notes.py)", "render (notes.py)"): 30,
                         ("main (gunicorn/app.py)", "handle (notes.py)", "dumps (json/encoder.py)"): 50,
                         ("main (gunicorn/app.py)", "send (libc.so.6)"): 20})


def _side(alias: str, stacks: Stacks, stack_id: str = "app:gunicorn-sync") -> ProfileRecord:
    record = profile(stack_id)
    frames, indexed = compact(stacks)
    return replace(record, spec=replace(record.spec, alias=alias, trial_id=f"{record.spec.trial_id}#{alias}"),
                   frames=frames, stacks=indexed, samples=stacks.total)


def test_a_gate_run_pairs_each_stack_s_base_and_head() -> None:
    unreadable = replace(_side("head", HEAD_STACKS, "go:net-http"), unreadable="not Python", samples=0)
    (pair,) = gate_pairs([_side("base", BASE_STACKS), _side("head", HEAD_STACKS), unreadable,
                          _side("base", BASE_STACKS, "go:net-http")])
    assert (pair.stack, pair.workload, pair.cell) == ("app:gunicorn-sync", "hello", 1)
    assert (pair.base, pair.head) == (BASE_STACKS, HEAD_STACKS)
    assert gate_pairs([_side("head", HEAD_STACKS)]) == ()  # one side alone: nothing to compare


def test_the_summary_lists_the_changes_and_links_the_differential_flame_graph(tmp_path: Path) -> None:
    drawn = write_diff_flames(tmp_path, gate_pairs([_side("base", BASE_STACKS), _side("head", HEAD_STACKS)]))
    ((_pair, svg),) = drawn
    assert svg == tmp_path / "profiles" / "diff.app_gunicorn-sync.hello.svg"
    assert ET.parse(svg).getroot().tag.endswith("svg")
    section = changes_markdown(drawn)
    assert f"([differential flame graph]({svg}))" in section
    assert "| dumps (json/encoder.py) | 10.0% | 50.0% | +40.0 pts |" in section
    assert "| render (notes.py) | 70.0% | 30.0% | -40.0 pts |" in section
    # the native send counts with the Python frame that called it (profile/diff.py)
    assert "| main (gunicorn/app.py) | 20.0% | 20.0% | +0.0 pts |" in section and "libc" not in section
    gate = Gate(0.02, (GateRow("app:gunicorn-sync", GateFigure.RPS, None, GateVerdict.NO_INTERVAL),))
    text = gate_summary(gate, ("pywebbench", "app"), profiles=section)
    assert text.index("| Stack | Figure |") < text.index("### Where the CPU time moved") < text.index("Made by:")
    assert "Where the CPU time moved" not in gate_summary(gate, ("pywebbench", "app"))


def test_at_most_ten_functions_and_every_name_escaped() -> None:
    many = Stacks.of({("main", f"f{i} (x.py)"): 1 + i for i in range(15)} | {("main", "a|b (x.py)"): 40})
    drawn = ((gate_pairs([_side("base", BASE_STACKS), _side("head", many)])[0], Path("d.svg")),)
    table = [line for line in changes_markdown(drawn).splitlines() if line.startswith("| ") and "%" in line]
    assert len(table) == 10
    assert any(line.startswith("| a\\|b (x.py) |") for line in table)


def test_a_failed_gate_names_the_function_that_grew_most(tmp_path: Path) -> None:
    drawn = write_diff_flames(tmp_path, gate_pairs([_side("base", BASE_STACKS), _side("head", HEAD_STACKS)]))
    failed = profile_lines(drawn, ["app:gunicorn-sync"])
    assert "profile: app:gunicorn-sync hello: dumps (json/encoder.py) grew most, 10.0% -> 50.0% of the samples " \
           "(+40.0 pts)" in failed
    passed = profile_lines(drawn, [])
    assert "grew most" not in passed and f"differential flame graph {tmp_path}" in passed
    assert profile_lines((), ["app:gunicorn-sync"]) == ""


def _run(path: Path, rps: float, stacks: Stacks) -> None:
    writer = ResultsWriter(results_path(path), header())
    for round_no, jitter in enumerate((0.99, 1.0, 1.01, 1.0), start=1):
        writer.add_trial(trial("flask:gunicorn-sync", rps * jitter, round_no=round_no))
        writer.add_trial(trial("falcon:gunicorn-sync", 1000.0 * jitter, round_no=round_no))
    frames, indexed = compact(stacks)
    writer.add_profile(replace(profile(), frames=frames, stacks=indexed, samples=stacks.total))
    writer.finish("complete")
    writer.close()


def test_compare_of_two_profiled_runs_names_the_growth_and_writes_the_summary(tmp_path: Path) -> None:
    _run(tmp_path / "before", 1000.0, BASE_STACKS)
    _run(tmp_path / "after", 700.0, HEAD_STACKS)
    summary = tmp_path / "summary.md"
    done = subprocess.run([str(PYWEBBENCH), "compare", str(tmp_path / "before"), str(tmp_path / "after"),
                           "--fail-on-regression", "5%", "--summary", str(summary)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1, done.stderr
    assert "regression: flask:gunicorn-sync" in done.stderr
    assert "dumps (json/encoder.py) grew most, 10.0% -> 50.0%" in done.stderr
    svg = tmp_path / "after" / "profiles" / "diff.flask_gunicorn-sync.hello.svg"
    assert svg.is_file() and f"[differential flame graph]({svg})" in summary.read_text()
    assert compare_pairs([profile()], [profile("falcon:gunicorn-sync")]) == ()  # no stack in both

