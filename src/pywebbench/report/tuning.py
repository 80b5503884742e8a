"""The tuning table: candidates ranked, the objective with its interval, ties, CPU and memory,
what was cut short, and the command that deploys the best (terminal and Markdown)."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

from rich.table import Table

from pywebbench.analyze.tuning import Ranked, Tuning
from pywebbench.report.common import inert, plain_console
from pywebbench.report.markdown import code, escape

HEADERS = ("#", "Server", "Class", "Workers", "Threads", "Objective", "95% interval", "vs best", "CPU ms/req",
           "Peak RSS MiB", "Rounds", "Tie", "Stage", "Note")


def tuning_headers(tuning: Tuning) -> tuple[str, ...]:
    """A capacity's interval is its search's bracket (held, failed), not a confidence interval."""
    if not tuning.capacity:
        return HEADERS
    return tuple("Bracket" if h == "95% interval" else h for h in HEADERS)


def tuning_cells(tuning: Tuning) -> list[list[str]]:
    """The table's rows as text, for renderers that lay it out themselves (HTML)."""
    return [_cells(tuning, row) for row in tuning.ranked]


def _num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def _objective(tuning: Tuning, row: Ranked) -> tuple[str, str]:
    m = row.measured
    unit = "req/s"
    if m.value is None:
        return "-", "-"
    if tuning.capacity:
        return f"{m.value:,.0f} {unit}", capacity_bracket(m.interval, m.capacity.stopped if m.capacity else None)
    interval = f"[{m.interval[0]:,.0f}, {m.interval[1]:,.0f}]" if m.interval else "-"
    return f"{m.value:,.0f} {unit}", interval


def capacity_bracket(interval: Sequence[float] | None, stopped: str | None) -> str:
    """A capacity search's bracket: [held, failed), or why it has no upper end."""
    if interval:
        return f"[{interval[0]:,.0f}, {interval[1]:,.0f})"
    return "beyond the search's top" if stopped == "max-rate" else "no probe failed before the search was cut"


def _vs_best(tuning: Tuning, row: Ranked) -> str:
    if row.to_best is None:
        return "-"
    if row.vs_best is not None:
        return f"{row.to_best:.3f} [{row.vs_best.low:.3f}, {row.vs_best.high:.3f}]"
    apart = " (other stage)" if tuning.capacity else " (chained)"
    return f"{row.to_best:.3f}" + ("" if row.beside_best or row.rank == 1 else apart)


def _cells(tuning: Tuning, row: Ranked) -> list[str]:
    c = row.config
    objective, interval = _objective(tuning, row)
    m = row.measured
    return [str(row.rank), c.server, c.worker_class, str(c.workers), str(c.threads), objective, interval,
            _vs_best(tuning, row), _num(m.cpu_ms_per_req, ".3f"), _num(m.rss_mb, ".0f"), str(m.rounds),
            "=1" if row.tied else "", row.stage, m.cut_short or ""]


def tuning_title(tuning: Tuning) -> str:
    what = f"capacity under {tuning.objective}" if tuning.capacity else "throughput"
    budget = f", budget {tuning.budget_s:g}s" if tuning.budget_s else ""
    return f"tuning: {what} - {tuning.workload}{budget}"


def tuning_footer(tuning: Tuning) -> list[str]:
    lines = [f"bounds: {b}" for b in tuning.bounds]
    lines += list(tuning.notes)
    if tuning.capacity:
        lines.append("Tie '=1': cannot be told apart from the best with what was spent; '(other stage)': its capacity "
                     "was measured in another stage than the best's, at another time")
    else:
        lines.append("Tie '=1': cannot be told apart from the best with what was spent; '(chained)': not measured "
                     "beside the best, its ratio goes through the incumbents it was measured beside")
    stages = "; ".join(f"{stack} {name} ({count})" for stack, name, count in tuning.stages)
    lines.append(f"stages run: {stages or 'none'}")
    unknown = [r for r in tuning.ranked if r.open_tie]
    if unknown:
        lines.append(f"not offered to deploy: {len(unknown)} tied configuration(s) whose own measuring was cut short "
                     "(they may lie as high as the best, or far below it; a longer --budget tells)")
    best = tuning.ranked[0] if tuning.ranked and tuning.ranked[0].rank == 1 else None
    if best is not None and best.measured.cut_short:
        lines.append(f"the best's own measuring was cut short ({best.measured.cut_short}): it leads on what was "
                     "measured, and its figure is a floor, not a bracket (a longer --budget closes it)")
    cut = tuning.cut_short
    if cut:
        lines.append("cut short: " + "; ".join(f"{label}: {why}" for label, why in cut))
    else:
        lines.append("cut short: none")
    return lines


def render_tuning(tuning: Tuning, width: int = 175) -> str:
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    table = Table(title=tuning_title(tuning), title_justify="left")
    for header in tuning_headers(tuning):
        table.add_column(header, justify="right" if header in ("#", "Workers", "Threads", "Rounds") else "left")
    for row in tuning.ranked:
        table.add_row(*_cells(tuning, row))
    console.print(table)
    for line in tuning_footer(tuning):
        console.print(line)
    if tuning.deploy:
        console.print("deploy the best" + (" (or a configuration tied with it):" if len(tuning.deploy) > 1 else ":"))
        for label, command in tuning.deploy:
            console.print(f"  {label}: {command}")
            for line in _sizing(tuning, label):
                console.print(f"    {line}")
    else:
        console.print("deploy: no configuration held the objective")
    return inert(buffer.getvalue())


def render_tuning_markdown(tuning: Tuning) -> str:
    headers = tuning_headers(tuning)
    lines = [f"## {escape(tuning_title(tuning))}", "", "| " + " | ".join(headers) + " |",
             "|" + "|".join("---:" if h in ("#", "Workers", "Threads", "Rounds") else "---" for h in headers) + "|"]
    lines += ["| " + " | ".join(escape(cell) for cell in _cells(tuning, row)) + " |" for row in tuning.ranked]
    lines.append("")
    lines += [f"- {escape(line)}" for line in tuning_footer(tuning)]
    lines.append("")
    if tuning.deploy:
        lines.append("Deploy the best" + (" (or a configuration tied with it):" if len(tuning.deploy) > 1 else ":"))
        lines.append("")
        for label, command in tuning.deploy:
            lines.append(f"- {escape(label)}: {code(command)}")
            sizing = _sizing(tuning, label)
            if sizing:
                lines += ["", "  ```yaml", *(f"  {line}" for line in sizing), "  ```", ""]
    else:
        lines.append("No configuration held the objective: nothing to deploy.")
    return "\n".join(lines) + "\n"


def _sizing(tuning: Tuning, label: str) -> list[str]:
    """The lines beside a deploy command: its Kubernetes resources, and the pods --target-rate needs."""
    lines = [line for name, block in tuning.resources if name == label for line in block.splitlines()]
    return lines + [f"# {text}" for name, text in tuning.pods if name == label]


def write_tuning(run_dir: Path, tuning: Tuning) -> Path:
    """tuning.json (the whole record) and tuning.md beside the results file; the Markdown's path."""
    (run_dir / "tuning.json").write_text(json.dumps(asdict(tuning), indent=1) + "\n")
    markdown = run_dir / "tuning.md"
    markdown.write_text(render_tuning_markdown(tuning))
    return markdown
