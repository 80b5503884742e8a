"""docs/ci-recipe.md's measured maintainer gate (issue 47): the gates scripts/maintainer-gate-series
ran, from docs/results/maintainer-gate/<spin>us/<i>/ (gate-run.json with the exit code and the
settings, gate.json with head/base per figure, results.jsonl with the windows)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path

from pywebbench.report.pages.gate_series import base_windows_cpu_ms, median_range, one_run_ratios


@dataclass(frozen=True)
class MaintainerGate:
    exit: int
    settings: str
    """Stack, method, budget and threshold, as the series script was given them."""
    rps: float | None
    """head/base req/s (the gate's centre)."""
    cpu: float | None
    """head/base CPU per request: the check of the injected cost's size."""
    base_cpu_ms: float | None
    """The base's median CPU per request over the gate's windows (ms)."""


def _base_cpu_ms(run: Path) -> float | None:
    values = base_windows_cpu_ms(run)
    return statistics.median(values) if values else None


def load_gate(run: Path) -> MaintainerGate:
    meta = json.loads((run / "gate-run.json").read_text())
    settings = f"`{meta['stack']}`, {meta['method']}, {meta['budget']}, gate at {meta['threshold']}"
    return MaintainerGate(int(meta["exit"]), settings, *one_run_ratios(run), _base_cpu_ms(run))


def load_series(folder: Path) -> list[MaintainerGate]:
    runs = sorted((p for p in folder.iterdir() if (p / "gate-run.json").exists()), key=lambda p: int(p.name))
    return [load_gate(run) for run in runs]


def _spin(folder: Path) -> float:
    try:
        return float(folder.name.removesuffix("us"))
    except ValueError:
        return float("inf")


def _row(spin: str, gates: list[MaintainerGate]) -> str:
    failed = sum(g.exit == 1 for g in gates)
    other = sum(g.exit not in (0, 1) for g in gates)
    settings = "; ".join(sorted({g.settings for g in gates}))
    return (f"| {spin} us | {settings} | {len(gates)} | {failed} | {other} | "
            f"{median_range([g.rps for g in gates if g.rps is not None])} | "
            f"{median_range([g.cpu for g in gates if g.cpu is not None])} | "
            f"{median_range([g.base_cpu_ms for g in gates if g.base_cpu_ms is not None])} |")


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
        spin, gates = folder.name.removesuffix("us"), load_series(folder)
        lines.append(_row(spin, gates))
        said.append(_sentence(spin, gates))
    return "\n".join(lines) + "\n\n" + "\n".join(said) + "\n"


def _sentence(spin: str, gates: list[MaintainerGate]) -> str:
    failed = sum(g.exit == 1 for g in gates)
    if spin in ("0", "0.0"):
        return (f"- No change (the head is the base's code at another version, built afresh): "
                f"{failed} of {len(gates)} gates failed.")
    sizes = [g.cpu - 1.0 for g in gates if g.cpu is not None]
    size = f"{statistics.median(sizes):+.1%} of CPU per request as measured" if sizes else "its size unmeasured"
    return f"- {spin} us injected ({size}): {failed} of {len(gates)} gates failed."
