"""docs/ci-recipe.md's measured maintainer gate (issue 47): the gates scripts/maintainer-gate-series
ran, from docs/results/maintainer-gate/<spin>us/<i>/ (gate-run.json with the exit code and the
settings, gate.json with head/base per figure, results.jsonl with the windows)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.analyze.pairing import cpu_per_request
from pywebbench.results.store import load_results


@dataclass(frozen=True)
class MaintainerGate:
    exit: int
    settings: str
    """Stack, method, budget and threshold, as the series script was given them."""
    rps: tuple[float, float, float] | None
    """head/base req/s and its 95% interval."""
    cpu: tuple[float, float, float] | None
    """head/base CPU per request and its interval: the check of the injected cost's size."""
    base_cpu_ms: float | None
    """The base's median CPU per request over the gate's windows (ms)."""


def _figure(rows: dict[str, dict[str, Any]], figure: str) -> tuple[float, float, float] | None:
    row = rows.get(figure)
    if row is None or row.get("ratio") is None or row.get("ci") is None:
        return None
    return float(row["ratio"]), float(row["ci"][0]), float(row["ci"][1])


def _base_cpu_ms(run: Path) -> float | None:
    if not (run / "results.jsonl").exists():
        return None
    found = [cpu_per_request(t) for t in load_results(run).trials if t.spec.alias == "base"]
    values = [1000 * s for s in found if s is not None]
    return statistics.median(values) if values else None


def load_gate(run: Path) -> MaintainerGate:
    meta = json.loads((run / "gate-run.json").read_text())
    rows: dict[str, dict[str, Any]] = {}
    if (run / "gate.json").exists():
        rows = {r["figure"]: r for r in json.loads((run / "gate.json").read_text())["rows"]}
    settings = f"`{meta['stack']}`, {meta['method']}, {meta['budget']}, gate at {meta['threshold']}"
    return MaintainerGate(int(meta["exit"]), settings, _figure(rows, "req/s"), _figure(rows, "CPU/req"),
                          _base_cpu_ms(run))


def load_series(folder: Path) -> list[MaintainerGate]:
    runs = sorted((p for p in folder.iterdir() if (p / "gate-run.json").exists()), key=lambda p: int(p.name))
    return [load_gate(run) for run in runs]


def _spin(folder: Path) -> float:
    try:
        return float(folder.name.removesuffix("us"))
    except ValueError:
        return float("inf")


def _median_range(values: list[float]) -> str:
    if not values:
        return "-"
    return f"{statistics.median(values):.4f} ({min(values):.4f}-{max(values):.4f})"


def _row(spin: str, gates: list[MaintainerGate]) -> str:
    failed = sum(g.exit == 1 for g in gates)
    other = sum(g.exit not in (0, 1) for g in gates)
    covered = [g.cpu for g in gates if g.cpu is not None]
    settings = "; ".join(sorted({g.settings for g in gates}))
    return (f"| {spin} us | {settings} | {len(gates)} | {failed} | {other} | "
            f"{_median_range([g.rps[0] for g in gates if g.rps is not None])} | "
            f"{_median_range([c[0] for c in covered])} | "
            f"{_median_range([g.base_cpu_ms for g in gates if g.base_cpu_ms is not None])} |")


def section(results: Path) -> str:
    root = results / "maintainer-gate"
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=_spin) if root.is_dir() else []
    if not folders:
        return "No maintainer gate series committed yet (`scripts/maintainer-gate-series`).\n"
    lines = ["| head's extra CPU per WSGI call | gate | gates | failed (exit 1) | finished otherwise "
             "| head/base req/s, median (range) | head/base CPU per request, median (range) "
             "| base's CPU per request, ms |", "|---|---|---|---|---|---|---|---|"]
    said = []
    for folder in folders:
        gates = load_series(folder)
        lines.append(_row(folder.name.removesuffix("us"), gates))
        said.append(_sentence(folder.name.removesuffix("us"), gates))
    return "\n".join(lines) + "\n\n" + "\n".join(said) + "\n"


def _sentence(spin: str, gates: list[MaintainerGate]) -> str:
    failed = sum(g.exit == 1 for g in gates)
    if spin in ("0", "0.0"):
        return (f"- No change (the head is the base's code at another version, built afresh): "
                f"{failed} of {len(gates)} gates failed.")
    sizes = [g.cpu[0] - 1.0 for g in gates if g.cpu is not None]
    size = f"{statistics.median(sizes):+.1%} of CPU per request as measured" if sizes else "its size unmeasured"
    return f"- {spin} us injected ({size}): {failed} of {len(gates)} gates failed."
