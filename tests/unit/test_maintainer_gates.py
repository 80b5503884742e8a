"""docs/ci-recipe.md's maintainer gate table, from what scripts/maintainer-gate-series keeps."""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.report.pages.maintainer_gates import section


def _gate(root: Path, spin: str, i: int, exit_code: int, rows: list[dict[str, object]] | None) -> None:
    run = root / "maintainer-gate" / f"{spin}us" / str(i)
    run.mkdir(parents=True)
    (run / "gate-run.json").write_text(json.dumps({"exit": exit_code, "spin_us": float(spin), "threshold": "0.5%",
                                                   "budget": "2m", "stack": "bottle:gunicorn-sync", "method": "duet"}))
    if rows is not None:
        (run / "gate.json").write_text(json.dumps({"rows": rows}))


def _rows(rps: float, cpu: float) -> list[dict[str, object]]:
    return [{"figure": "req/s", "ratio": rps, "ci": [rps - 0.01, rps + 0.01]},
            {"figure": "CPU/req", "ratio": cpu, "ci": [cpu - 0.01, cpu + 0.01]},
            {"figure": "p99", "ratio": 1.0, "ci": None}]


def test_each_series_counts_its_failed_gates_and_states_the_injected_size(tmp_path: Path) -> None:
    assert "No maintainer gate series committed yet" in section(tmp_path)
    for i, (code, rps, cpu) in enumerate(((0, 1.002, 0.999), (1, 0.992, 1.006), (0, 0.998, 1.001)), start=1):
        _gate(tmp_path, "0", i, code, _rows(rps, cpu))
    for i, (code, rps, cpu) in enumerate(((1, 0.979, 1.021), (1, 0.981, 1.019)), start=1):
        _gate(tmp_path, "3", i, code, _rows(rps, cpu))
    _gate(tmp_path, "3", 3, 130, None)  # interrupted before its gate.json
    text = section(tmp_path)
    settings = "`bottle:gunicorn-sync`, duet, 2m, gate at 0.5%"
    assert f"| 0 us | {settings} | 3 | 1 | 0 | 0.9980 (0.9920-1.0020) | 1.0010 (0.9990-1.0060) | - |" in text
    assert f"| 3 us | {settings} | 3 | 2 | 1 | 0.9800 (0.9790-0.9810) | 1.0200 (1.0190-1.0210) | - |" in text
    assert "- No change (the head is the base's code at another version, built afresh): 1 of 3 gates failed." in text
    assert "- 3 us injected (+2.0% of CPU per request as measured): 2 of 3 gates failed." in text


def test_series_read_in_order_of_their_injected_cost(tmp_path: Path) -> None:
    for spin in ("10", "3", "0"):
        _gate(tmp_path, spin, 1, 0, _rows(1.0, 1.0))
    rows = [line.split(" | ")[0] for line in section(tmp_path).splitlines() if line.startswith("| ") and " us |" in line]
    assert rows == ["| 0 us", "| 3 us", "| 10 us"]
