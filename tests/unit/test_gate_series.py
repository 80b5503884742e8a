"""docs/ci-recipe.md's table of measured gates, from what scripts/ci-gate-series keeps."""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.report.pages.gate_series import section


def _gate(root: Path, series: str, i: int, exit_code: int, design: str, **files: object) -> None:
    run = root / "ci-gate" / series / str(i)
    run.mkdir(parents=True)
    (run / "gate-run.json").write_text(json.dumps({"exit": exit_code, "design": design, "spin_us": 0}))
    for name, body in files.items():
        (run / f"{name}.json").write_text(json.dumps(body))


def test_each_series_says_how_many_gates_failed_and_what_head_over_base_read(tmp_path: Path) -> None:
    assert "No gate series committed yet" in section(tmp_path)
    for i, (code, rps) in enumerate(((0, 1.001), (1, 0.990), (0, 0.998)), start=1):
        _gate(tmp_path, "one-run-0us", i, code, "one-run",
              gate={"rows": [{"figure": "req/s", "ratio": rps}, {"figure": "CPU/req", "ratio": 1.0 / rps}]})
    _gate(tmp_path, "two-run-14us", 1, 1, "two-run",
          compare={"changes": [{"rps_change": -0.03, "cpu_after": 0.62, "cpu_before": 0.60}]})
    _gate(tmp_path, "two-run-14us", 2, 130, "two-run")  # interrupted: no compare written
    text = section(tmp_path)
    assert "| one-run | 0 us | 3 | 1 | 0 | 0.9980 (0.9900-1.0010) | 1.0020 (0.9990-1.0101) |" in text
    assert "| two-run | 14 us | 2 | 1 | 1 | 0.9700 (0.9700-0.9700) | 1.0333 (1.0333-1.0333) |" in text
    assert "- At" not in text  # no injected cost was run by both designs


def test_where_both_designs_ran_the_page_sets_their_false_alarms_side_by_side(tmp_path: Path) -> None:
    for i, (code, rps) in enumerate(((0, 1.001), (0, 0.995)), start=1):
        _gate(tmp_path, "one-run-0us", i, code, "one-run", gate={"rows": [{"figure": "req/s", "ratio": rps}]})
    for i, (code, change) in enumerate(((1, -0.04), (0, 0.002), (1, 0.08)), start=1):
        _gate(tmp_path, "two-run-0us", i, code, "two-run", compare={"changes": [{"rps_change": change}]})
    assert ("- At 0 us: the one-run gate failed 0 of 2, the two-run recipe 2 of 3; the gates' head/base req/s "
            "spanned 0.6% under one run and 12.0% under two.") in section(tmp_path)


def test_series_read_in_order_of_their_injected_cost(tmp_path: Path) -> None:
    for series in ("one-run-20us", "one-run-4us", "one-run-0us", "two-run-0us"):
        _gate(tmp_path, series, 1, 0, series.split("-run")[0] + "-run", gate={"rows": []})
    rows = [line.split(" | ")[:2] for line in section(tmp_path).splitlines() if line.startswith("| one-run |")
            or line.startswith("| two-run |")]
    assert rows == [["| one-run", "0 us"], ["| one-run", "4 us"], ["| one-run", "20 us"], ["| two-run", "0 us"]]


def test_the_injected_cost_is_read_as_a_share_of_the_committed_base_requests() -> None:
    """The committed 20 us series: its measured share agrees with its head/base CPU per request."""
    results = Path(__file__).resolve().parents[2] / "docs" / "results"
    text = section(results)
    share = text.split("20 us against the base's ")[1].split(")")[0]  # '0.994 ms of CPU per request (2.0%'
    assert share.endswith("%") and 1.5 <= float(share.rsplit("(", 1)[1].removesuffix("%")) <= 2.5
