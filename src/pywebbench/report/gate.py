"""The gate's answer as text (terminal, CI log), Markdown (a job summary) and JSON (gate.json)."""

from __future__ import annotations

import json
from typing import Any

from pywebbench.analyze.gate import Gate, GateRow, GateVerdict
from pywebbench.report.markdown import escape


def render_gate(gate: Gate) -> str:
    head = (f"gate: head over base, judged at +-{gate.threshold:.1%}: "
            + ("FAIL" if gate.failed else "pass")
            + f" ({len(gate.regressions)} regression(s) of {len(gate.rows)} figures)")
    return "\n".join([head, *(f"  {row.line}" for row in gate.rows)]) + "\n"


def gate_markdown(gate: Gate) -> str:
    lines = [f"**Gate: {'FAIL' if gate.failed else 'pass'}** (head/base, judged at ±{gate.threshold:.1%})", "",
             "| Stack | Figure | head/base | 95% interval | Rounds (launches) | Verdict |",
             "|---|---|---:|---|---:|---|"]
    for row in gate.rows:
        lines.append("| " + " | ".join(escape(cell) for cell in _cells(row)) + " |")
    return "\n".join(lines) + "\n"


def _cells(row: GateRow) -> list[str]:
    iv = row.interval
    if iv is None:
        return [row.stack, row.figure.value, "", row.why_none or "no interval", "", row.verdict.value]
    verdict = row.verdict.value
    if row.verdict is GateVerdict.UNRESOLVED:
        verdict += f" (about {row.rounds_needed} rounds would resolve it)" if row.rounds_needed else " (at the threshold)"
    return [row.stack, row.figure.value, f"{iv.center:.4f}", f"[{iv.low:.4f}, {iv.high:.4f}]",
            f"{iv.n_rounds} ({iv.n_launches})", verdict]


def gate_json(gate: Gate) -> str:
    def row(r: GateRow) -> dict[str, Any]:
        iv = r.interval
        return {"stack": r.stack, "figure": r.figure.value, "verdict": r.verdict.value,
                "ratio": iv.center if iv else None, "ci": [iv.low, iv.high] if iv else None,
                "df": iv.df if iv else None, "rounds": iv.n_rounds if iv else None,
                "launches": iv.n_launches if iv else None, "rounds_needed": r.rounds_needed, "why_none": r.why_none}
    return json.dumps({"schema_version": 1, "threshold": gate.threshold, "failed": gate.failed,
                       "rows": [row(r) for r in gate.rows]}, indent=2) + "\n"
