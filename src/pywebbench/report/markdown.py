"""Markdown: a line about the run, one GitHub-flavoured table per cell, then the notes (a line per
kind of check a row failed, report/check_summary.py, and each kind's advice once), for pasting into
an issue or a README."""

from __future__ import annotations

from collections.abc import Sequence

from pywebbench.analyze.rows import Row, summarize
from pywebbench.measure.checks import advice
from pywebbench.report.check_summary import check_lines
from pywebbench.plan.knobs import knob_labels
from pywebbench.report.columns import Align, Format, TableInfo, row_cells, shown
from pywebbench.report.common import cell_title, cells, inert, method_note, run_workloads
from pywebbench.report.deploy import app_notes, deploy_commands
from pywebbench.results.model import ResultSet


def escape(text: str) -> str:
    """A table cell's text, safe from breaking the table or being read as HTML."""
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")
            .replace("\r", " ").replace("\n", " "))


def code(text: str) -> str:
    """An inline code span; its contents are literal, so only a backtick needs replacing."""
    return "`" + text.replace("`", "'") + "`"


def _table(rows: Sequence[Row]) -> list[str]:
    info = TableInfo(rows)
    columns = shown(Format.MARKDOWN, info)
    lines = ["| " + " | ".join(c.header_in(Format.MARKDOWN) for c in columns) + " |",
             "| " + " | ".join("---:" if c.align is Align.RIGHT else "---" for c in columns) + " |"]
    lines += ["| " + " | ".join(escape(cell.text) for cell in row_cells(Format.MARKDOWN, info, columns, row)) + " |"
              for row in rows]
    return lines


def _header(results: ResultSet) -> str:
    h = results.header
    m = h.machine
    state = "complete" if results.complete else "incomplete (interrupted or still running)"
    tools = ", ".join(escape(version if version.lower().startswith(name.lower()) else f"{name} {version}")
                      for name, version in sorted(h.tools.items()))
    return (f"**pywebbench run {code(h.run_id)}** - {state} - {len(results.trials)} trials - {escape(h.created_at)} - "
            f"{escape(m.cpu_model)}, {m.cpu_count} CPUs, {m.memory_mb:,} MiB, {escape(m.os)}, kernel {escape(m.kernel)}, "
            f"Python {escape(m.python)}" + (f" - tools: {tools}" if tools else ""))


def render_markdown(results: ResultSet) -> str:
    summary = summarize(results)
    lines = [_header(results), ""]
    grouped = cells(summary.rows, run_workloads(results))
    for rows in grouped:
        lines += [f"### {escape(cell_title(rows[0].spec))}", "", *_table(rows), ""]
    deploy = deploy_commands(results)
    if deploy:
        lines += ["### Deploy commands", "", "As measured; the app listens on 0.0.0.0:8000.", ""]
        lines += [f"- {code(label)}: {code(command)}" for label, command in deploy]
        lines += [f"- {escape(note)}" for note in app_notes(results)]
        lines.append("")
    lines += ["### Notes", ""]
    aggregation = " / ".join(sorted({r.aggregation for r in summary.rows})) or "median"
    lines.append(f"- Req/s is the {aggregation} of each stack's repeats; brackets hold its bootstrap 95% interval "
                 "(none with a single repeat).")
    paired = [r for r in summary.rows if r.method.paired]
    if paired:
        lines.append(f"- {escape(method_note(paired))}")
    if summary.baseline_missing:
        missing = escape(", ".join(summary.baseline_missing))
        lines.append(f"- No ratio for {missing}: the baseline {code(summary.baseline)} was not measured in this run "
                     f"(add {code('--stack ' + summary.baseline)}).")
    else:
        lines.append(f"- Ratio: req/s relative to {code(summary.baseline)} measured in the same cell.")
    seen: dict[str, str] = {}
    for row in (row for rows in grouped for row in rows):
        knobs = ", ".join(knob_labels(row.spec, omit=("stack_cpus",)))
        where = f"{code(row.label)} ({escape(row.spec.workload)}, {escape(knobs)})"
        if row.note:
            lines.append(f"- {where}: {escape(row.note)}")
        for line in check_lines(row):
            lines.append(f"- (!) {where}: {escape(line.text)}")
            seen.setdefault(line.kind, advice(line.kind))
    if seen:
        lines += ["", "What the checks mean:", ""]
        lines += [f"- **{escape(name)}**: {escape(hint or 'no advice recorded for this check')}"
                  for name, hint in seen.items()]
    return inert("\n".join(lines) + "\n")
