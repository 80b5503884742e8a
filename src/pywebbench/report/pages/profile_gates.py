"""docs/profiles.md's gate example: scripts/profile-gate-series' gates of examples/notes with an
injected cost (`_audit_trail`, SPIN_US of CPU per request in the head), kept under
docs/results/profile-gate/<spin>us[-<window>]/<i>/ with found.json saying which function the
gate's summary named first among those whose share changed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FOLDER = "profile-gate"
FUNCTION = "_audit_trail"


def _gates(series: Path) -> list[dict[str, Any]]:
    found = [(int(d.name), d / "found.json") for d in series.iterdir() if d.is_dir() and d.name.isdigit()]
    return [json.loads(path.read_text()) | {"gate": n} for n, path in sorted(found) if path.exists()]


def _window(series: Path, gates: list[dict[str, Any]]) -> str:
    said = {str(g.get("profile_window", "")) for g in gates} - {""}
    return said.pop() if len(said) == 1 else "the measured windows' own (4 s)" if "-" not in series.name else "?"


def section(results: Path) -> str:
    root = results / FOLDER
    rows = []
    for series in sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []:
        gates = _gates(series)
        if not gates:
            continue
        named = sum(bool(g.get("found")) for g in gates)
        firsts = "; ".join(f"{g['gate']}: {g.get('first_named') or 'no table'}" for g in gates)
        rows.append(f"| `{series.name}` | {gates[0].get('spin_us', 0):g} us | {_window(series, gates)} | {gates[0].get('budget', '?')} "
                    f"| {len(gates)} | {named} of {len(gates)} | {firsts} |")
    if not rows:
        return "## The gate example\n\nNot run yet: `scripts/profile-gate-series`.\n"
    return f"""\
## The gate example

`scripts/profile-gate-series COUNT SPIN_US THRESHOLD BUDGET WINDOW` makes a git repository of
`examples/notes` whose head spends SPIN_US microseconds of CPU per request in a function of its own
(`{FUNCTION}`) and gates head against base in one run (`pywebbench app --baseline-ref HEAD~1
--profile --profile-window WINDOW`); each gate's pull-request summary lists the ten functions whose
share of the samples changed most. Found: the summary names `{FUNCTION}` first. A gate whose
profile failed on either side has no table (before 4d98c32, py-spy --native dying of SIGSEGV
mid-window lost that side; the window is now loaded again with Python frames only). Every gate's gate.json, summary.md, console and results
are under `docs/results/{FOLDER}/` by series. `15us-30s-subprocesses` is the series as first run
with 30 s windows: one py-spy --native with --subprocesses per server died of SIGSEGV in 5 of its 6
profiled windows, the windows loaded again with Python frames only, where gunicorn's
`close_graceful` (waiting on the client's close, not on the CPU) took 36-45% of the samples and
moved more than the injected cost; stopped after 3 gates. Since then one py-spy samples each
process of the server.

| series | injected cost | profiled window | budget | gates | named first | first named, gate by gate |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}
"""
