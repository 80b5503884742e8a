"""A pull-request comment (or a job summary) in Markdown: PASS or FAIL on the first line, the
verdict table, each ratio's 95% interval, the command that made it, and a link to the HTML
report when one was written.

A run records no host noise of its own (scripts/host-noise measures the machine apart, under
docs/results/host-noise/), so the summary has no such line. Every string from a results file
is escaped (table cells) or fenced (the command), so a hostile label cannot reshape the comment.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from urllib.parse import quote

from pywebbench.analyze.compare import Comparison
from pywebbench.analyze.gate import Gate
from pywebbench.analyze.rows import latest_trials
from pywebbench.report.common import inert
from pywebbench.report.comparison import render_comparison_markdown
from pywebbench.report.gate import gate_markdown
from pywebbench.report.markdown import escape, render_markdown
from pywebbench.results.model import ResultSet


def title(what: str, passed: bool, detail: str) -> str:
    return f"## pywebbench {what}: {'PASS' if passed else 'FAIL'} ({escape(detail)})"


def command_block(command: Sequence[str]) -> list[str]:
    """The command in a fence longer than any run of backticks inside it, so nothing closes it early."""
    text = inert(shlex.join(command))
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall("`+", text)), default=0))
    return ["Made by:", "", fence + "sh", text, fence]


def html_line(html: str | None) -> list[str]:
    return [] if html is None else ["", f"[The HTML report]({quote(html, safe='/:')})"]


def _ending(command: Sequence[str], html: str | None) -> list[str]:
    return ["", *command_block(command), *html_line(html)] if command else html_line(html)


def gate_summary(gate: Gate, command: Sequence[str], *, code: int | None = None, html: str | None = None,
                 profiles: str = "") -> str:
    """The gate's verdicts; `code` is the command's exit code (default: the gate's own), so a
    run that failed otherwise (req/s without an interval) reads FAIL too. `profiles`: where the CPU
    time moved, when base and head were both profiled (report/profile_diff.py)."""
    code = (1 if gate.failed else 0) if code is None else code
    detail = f"{len(gate.regressions)} regression(s) of {len(gate.rows)} figures, head/base judged at " \
             f"±{gate.threshold:.1%}"
    if code == 0 and gate.failed:
        detail += "; the run not failed by them: no --fail-on-regression"
    elif code != 0 and not gate.failed:
        detail += f"; exit {code}, see the log"
    lines = [title("gate", code == 0, detail), "", gate_markdown(gate).rstrip("\n"), "",
             "Each interval is the 95% interval of head/base over the paired rounds of this one run; a figure "
             "fails when its whole interval lies past the threshold on the worse side (req/s down, p99 or CPU "
             "per request up)."]
    return "\n".join([*lines, *_profiles(profiles), *_ending(command, html)]) + "\n"


def _profiles(section: str) -> list[str]:
    return ["", section.rstrip("\n")] if section else []


def _interval(ci: tuple[float, float] | None) -> str:
    return "no interval" if ci is None else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def comparison_summary(comparison: Comparison, threshold: float | None, command: Sequence[str],
                       *, html: str | None = None, profiles: str = "") -> str:
    found = comparison.regressions(threshold) if threshold is not None else ()
    detail = (f"{len(found)} regression(s) past ±{threshold:.1%}" if threshold is not None
              else "not judged: no --fail-on-regression")
    lines = [title("compare", not found, detail), "", render_comparison_markdown(comparison).rstrip("\n"), "",
             "95% intervals of after/before:", ""]
    lines += [f"- {escape(c.stack)} {escape(c.workload)} ({escape(c.knobs)}): req/s {_interval(c.ratio_ci)}, "
              f"p99 {_interval(c.p99_ci)}, CPU/req {_interval(c.cpu_ci)}" for c in comparison.changes]
    if found:
        lines += ["", "Regressions:", "", *(f"- {escape(r.line)}" for r in found)]
    return "\n".join([*lines, *_profiles(profiles), *_ending(command, html)]) + "\n"


def run_summary(results: ResultSet, command: Sequence[str], *, code: int, html: str | None = None) -> str:
    """A run without a gate: PASS when its exit code was 0 (every window valid), its tables as
    `report --format markdown` writes them (ratios with their 95% intervals)."""
    trials = latest_trials(results.trials)
    bad = sum(not t.valid for t in trials)
    detail = f"{bad} of {len(trials)} window(s) invalid" + ("" if results.complete else ", the run did not finish")
    lines = [title("run", code == 0, detail), "", render_markdown(results).rstrip("\n")]
    return "\n".join([*lines, *_ending(command, html)]) + "\n"
