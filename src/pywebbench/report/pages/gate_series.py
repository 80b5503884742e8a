"""docs/ci-recipe.md's measured false alarms and power: the gates scripts/ci-gate-series ran,
from docs/results/ci-gate/<design>-<spin>us/<i>/ (gate-run.json with the exit code; gate.json
for a one-run gate, compare.json for the two-run recipe)."""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.analyze.gate import BASE
from pywebbench.analyze.pairing import cpu_per_request
from pywebbench.results.store import load_results


@dataclass(frozen=True)
class Gate:
    exit: int
    rps: float | None
    """head/base req/s (the gate's centre)."""
    cpu: float | None
    """head/base CPU per request: the check of the injected cost's size."""


def one_run_ratios(folder: Path) -> tuple[float | None, float | None]:
    """head/base req/s and CPU per request from a one-run gate's gate.json (None where it has none)."""
    path = folder / "gate.json"
    if not path.exists():
        return None, None
    rows = {r["figure"]: r for r in json.loads(path.read_text())["rows"]}
    return rows.get("req/s", {}).get("ratio"), rows.get("CPU/req", {}).get("ratio")


def _two_run(folder: Path) -> tuple[float | None, float | None]:
    path = folder / "compare.json"
    if not path.exists():
        return None, None
    changes: list[dict[str, Any]] = json.loads(path.read_text())["changes"]
    if not changes:
        return None, None
    c = changes[0]
    rps = c["rps_change"] + 1.0 if c.get("rps_change") is not None else None
    cpu = c["cpu_after"] / c["cpu_before"] if c.get("cpu_after") and c.get("cpu_before") else None
    return rps, cpu


def load_series(folder: Path) -> list[Gate]:
    gates = []
    for run in sorted((p for p in folder.iterdir() if (p / "gate-run.json").exists()), key=lambda p: int(p.name)):
        meta = json.loads((run / "gate-run.json").read_text())
        rps, cpu = (_two_run if meta["design"] == "two-run" else one_run_ratios)(run)
        gates.append(Gate(int(meta["exit"]), rps, cpu))
    return gates


def median_range(values: list[float]) -> str:
    """`median (lowest-highest)` of a series' figures, '-' for none."""
    if not values:
        return "-"
    return f"{statistics.median(values):.4f} ({min(values):.4f}-{max(values):.4f})"


def section(results: Path) -> str:
    root = results / "ci-gate"
    folders = sorted((p for p in root.iterdir() if p.is_dir()), key=_order) if root.is_dir() else []
    if not folders:
        return "No gate series committed yet (`scripts/ci-gate-series`).\n"
    lines = ["| design | head's extra CPU | gates | failed (exit 1) | finished otherwise | head/base req/s, median (range) "
             "| head/base CPU per request |", "|---|---|---|---|---|---|---|"]
    series: dict[tuple[str, str], list[Gate]] = {}
    for folder in folders:
        design, spin = _series(folder)
        gates = series[(design, spin)] = load_series(folder)
        failed = _failed(gates)
        other = sum(g.exit not in (0, 1) for g in gates)
        lines.append(f"| {design} | {spin} us | {len(gates)} | {failed} | {other} | "
                     f"{median_range([g.rps for g in gates if g.rps is not None])} | "
                     f"{median_range([g.cpu for g in gates if g.cpu is not None])} |")
    return "\n".join(lines) + "\n" + _one_beside_two(series) + _cost_shares(folders)


def _series(folder: Path) -> tuple[str, str]:
    """'one-run-20us' -> ('one-run', '20'): the design and the injected microseconds."""
    design, _, spin = folder.name.rpartition("-")
    return design, spin.removesuffix("us")


def _order(folder: Path) -> tuple[str, float]:
    """By design, then by injected cost as a number (4 us before 10 us)."""
    design, spin = _series(folder)
    try:
        return design, float(spin)
    except ValueError:
        return design, float("inf")


def base_windows_cpu_ms(run: Path) -> list[float]:
    """The base's CPU per request in each of a gate's windows (ms); none without its results."""
    if not (run / "results.jsonl").exists():
        return []
    found = [cpu_per_request(t) for t in load_results(run).trials if t.spec.alias == BASE]
    return [1000 * seconds for seconds in found if seconds is not None]


def base_cpu_ms(folder: Path) -> float | None:
    """The base's CPU per request over a one-run series' windows (ms): what the fixed-time
    injected cost is a share of, which differs with the machine the series ran on."""
    shares = [ms for run in folder.iterdir() for ms in base_windows_cpu_ms(run)]
    return statistics.median(shares) if shares else None


def _cost_shares(folders: list[Path]) -> str:
    """Why the same microseconds are a different share in different series."""
    said = []
    for folder in folders:
        design, spin = _series(folder)
        base = base_cpu_ms(folder) if design == "one-run" else None
        if base is not None and spin != "0":
            said.append(f"{spin} us against the base's {base:.3f} ms of CPU per request "
                        f"({float(spin) / 1000 / base:.1%})")
    if not said:
        return ""
    return ("\nThe injected cost is a fixed time per request, so its share of a request depends on the machine "
            "the series ran on (the VM is not the same from one session to the next): " + "; ".join(said)
            + ". The head/base CPU per request column is its size as measured.\n")


def _one_beside_two(series: dict[tuple[str, str], list[Gate]]) -> str:
    """What one run buys over two at each injected cost both designs were run at."""
    said = []
    for spin in sorted({s for d, s in series if d == "one-run"} & {s for d, s in series if d == "two-run"}, key=float):
        one, two = series[("one-run", spin)], series[("two-run", spin)]
        spans = [_span(one), _span(two)]
        if spans[0] is None or spans[1] is None:
            continue
        said.append(f"- At {spin} us: the one-run gate failed {_failed(one)} of {len(one)}, the "
                    f"two-run recipe {_failed(two)} of {len(two)}; the gates' head/base req/s "
                    f"spanned {spans[0]:.1%} under one run and {spans[1]:.1%} under two.")
    return ("\n" + "\n".join(said) + "\n") if said else ""


def _failed(gates: list[Gate]) -> int:
    return sum(g.exit == 1 for g in gates)


def _span(gates: list[Gate]) -> float | None:
    """The width of the gates' head/base req/s, highest less lowest."""
    values = [g.rps for g in gates if g.rps is not None]
    return max(values) - min(values) if values else None
