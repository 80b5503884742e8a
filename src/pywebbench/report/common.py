"""What every text format shares: stored text made inert, a plain console, the labels of a row,
number formats, and the cells (workload x knobs) a report is split into."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable, Sequence
from typing import Any

from rich.console import Console

from pywebbench.analyze.verdict_family import rule as verdict_rule
from pywebbench.analyze.rows import Row
from pywebbench.plan.duet_design import COMPLETE_UP_TO
from pywebbench.plan.knobs import cpus_label, knob_labels
from pywebbench.plan.knob_values import knob_words, window_seconds
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import Method, ResultSet, StackInfo, TrialSpec


# C0/C1 controls (but tab and newline) and the bidi overrides: from a results file they could
# clear the screen, retitle the terminal or reorder what a reader sees.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def inert(text: str) -> str:
    """Text from a results file made safe to print: every control character shown as \\xNN."""
    return escaped(_UNSAFE, text)


def escaped(unwanted: re.Pattern[str], text: str) -> str:
    """`text` with each character `unwanted` matches written as \\xNN (\\uNNNN above 0xff)."""
    return unwanted.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def plain_console(buffer: io.StringIO, width: int) -> Console:
    """A console into `buffer` that prints stored strings as they are: no rich markup (a stored
    "[/x]" would raise, "[link=...]" would make a link), no emoji codes, no colour."""
    return Console(file=buffer, width=width, force_terminal=False, color_system=None, markup=False, emoji=False,
                   highlight=False)


# The labels of a row.

def server_label(stack: StackInfo) -> str:
    detail = stack.worker_class if stack.server == "gunicorn" else (stack.variant or "")
    if detail and detail not in (stack.server, "prefork"):
        return f"{stack.server_title} ({detail})"
    return stack.server_title


def workers_label(stack: StackInfo) -> str:
    """'4', '4x10'; 'auto 1' where the server chose its own count (workers=auto)."""
    count = f"{stack.workers}x{stack.threads}" if stack.threads > 1 else str(stack.workers)
    return f"auto {count}" if stack.sizing is not None else count


def validity_label(row: Row) -> str:
    if row.valid:
        return "yes"
    return "NO: errors" if row.status == "ok" else f"NO: {row.status}"


def keepalive_label(row: Row) -> str:
    return {True: "on", False: "off", None: "?"}[row.keepalive]


def placement_lines(results: ResultSet) -> list[str]:
    """Roles on several hosts: each role's host, the delay mechanism, the RTT measured per point."""
    placed = next((s for s in results.services if s.name == "placement"), None)
    if placed is None:
        return []
    config = placed.config
    hosts = config.get("hosts", {}) if isinstance(config.get("hosts"), dict) else {}

    def where(name: object) -> str:
        host = hosts.get(name, {}) if isinstance(name, str) else {}
        cpus = host.get("cpus") if isinstance(host, dict) else None
        address = host.get("address", "?") if isinstance(host, dict) else "?"
        return f"{name} ({address}{f', {cpus} CPUs' if cpus else ''})"

    roles = config.get("roles", {}) if isinstance(config.get("roles"), dict) else {}
    lines = [f"Hosts ({placed.version}): " + "; ".join(
        f"{role} on {', '.join(where(n) for n in names)}" for role, names in roles.items() if isinstance(names, list))]
    lines.append(f"Links: {config.get('delay_mechanism', '?')}; {config.get('cpu_accounting', '')}.")
    per_point: dict[str, list[str]] = {}
    cpu: float | None = None
    for record in results.services:
        if not record.name.startswith("link "):
            continue
        c = record.config
        measured = c.get("rtt_measured_ms")
        text = f"{record.name[5:]} {measured:.2f} ms" if isinstance(measured, (int, float)) else record.name[5:]
        per_point.setdefault(str(c.get("point", "?")), []).append(text)
        if isinstance(c.get("proxy_cpu_s"), (int, float)):
            cpu = float(c["proxy_cpu_s"])
    for point, texts in per_point.items():
        lines.append(f"  measured RTT at {point}: {', '.join(dict.fromkeys(texts))}")
    if cpu is not None:
        lines.append(f"  link proxies' CPU by the last measurement: {cpu:.2f} s")
    return lines


def cell_title(spec: TrialSpec) -> str:
    """'hello - 100 connections - wrk - 5s (+2s warmup) - stack CPUs 1, generator CPUs 0 - ...'."""
    window_s = window_seconds(spec)
    timing = f"{spec.requests:,} requests" if spec.requests else f"{window_s:g}s (+{spec.warmup_s:g}s warmup)"
    return " - ".join([spec.workload, str(knob_words(spec, "connections")), spec.generator, timing,
                       f"stack CPUs {cpus_label(spec.stack_cpus)}, generator CPUs {cpus_label(spec.loadgen_cpus)}",
                       *knob_labels(spec, omit=("connections", "stack_cpus")),
                       # --method auto may measure one workload by duet and another interleaved.
                       *([f"method {spec.method}"] if spec.method.paired else [])])


def _order_key(value: object) -> tuple[int, float, str]:
    if value is None:
        return (0, 0.0, "")
    if isinstance(value, int | float):
        return (1, float(value), "")
    return (1, 0.0, str(value))


def cells(rows: Iterable[Row], workloads: Sequence[str] = ()) -> list[list[Row]]:
    """Rows split by cell (TrialSpec.cell), in the rows' order within each; cells ordered by
    workload (in the order given, e.g. the run's, then as first seen), then by their knobs
    numerically (so 25 connections comes before 100)."""
    groups: dict[tuple[object, ...], list[Row]] = {}
    for row in rows:
        groups.setdefault(row.spec.cell, []).append(row)
    order = list(dict.fromkeys([*workloads, *(str(cell[0]) for cell in groups)]))

    def key(cell: tuple[object, ...]) -> tuple[Any, ...]:
        return (order.index(str(cell[0])), tuple(_order_key(v) for v in cell[1:]))

    return [groups[cell] for cell in sorted(groups, key=key)]


def run_workloads(results: ResultSet) -> list[str]:
    """Workloads in the order the run measured them."""
    return list(dict.fromkeys(t.spec.workload for t in results.trials))


def num(value: float | None, fmt: str) -> str:
    return "-" if value is None else format(value, fmt)


def interval(ci: tuple[float, float] | None, fmt: str) -> str:
    """'[11,900–12,800]', or '' when there is no interval (a single repeat)."""
    return "" if ci is None else f"[{format(ci[0], fmt)}–{format(ci[1], fmt)}]"


def latency_format(ms: float | None) -> str:
    """Enough digits to tell sub-millisecond latencies apart, no false precision above."""
    if ms is None:
        return "-"
    return format(ms, ".2f" if ms < 10 else ".1f" if ms < 1000 else ",.0f")


def method_note(rows: list[Row]) -> str:
    """What the paired method (or each workload's, when --method auto chose one per workload) did
    and how to read its intervals and ties."""
    return f"{method_head(rows)}. {method_reading(rows)}"


def _by_method(rows: list[Row]) -> dict[Method, list[Row]]:
    by_method: dict[Method, list[Row]] = {}
    for row in rows:
        by_method.setdefault(row.method, []).append(row)
    return by_method


def method_head(rows: list[Row]) -> str:
    """The method note's first sentence: which method, how many rounds and launches, how long."""
    by_method = _by_method(rows)
    return "; ".join(_method_head(method, mine, named=len(by_method) > 1) for method, mine in by_method.items())


def method_reading(rows: list[Row]) -> str:
    """The rest of the method note: how to read its ratios, intervals, ties and (duet) pairs."""
    by_method = _by_method(rows)
    text = ("Ratio: to the baseline within each round, the geometric mean of "
            "its launch means; its 95% interval is Student's t over the launch means, their spread moderated "
            "across the table's stacks (one launch: no interval, 'needs 2 launches'; a table of one or two "
            "ratios lends nothing, and two launches there give one degree of freedom: 'needs 3 launches'). Rows with the "
            "same Tie number (in the terminal, a --wide column) are tied: their pair was not called different. Next: each row against "
            "the one below, != different, ~= equivalent (two one-sided tests within the run's --equivalence "
            "margin), ? unresolved. " + verdict_rule())
    if (duet := next((mine for method, mine in by_method.items() if strategy_of(method).side_by_side), None)) is not None:
        design = ("every pair of stacks was loaded at the same time once a round" if len({r.label for r in duet})
                  <= COMPLETE_UP_TO else "two stacks at a time, each beside its neighbours in the order the "
                  "rounds before gave and beside a random cycle's (two cycles a round, each stack in four windows)")
        text += (f" Duet: {design}, on the same CPUs "
                 "with equal CPU shares, and each ratio to the baseline is the least-squares fit to all of "
                 "the round's pairs; it is relative efficiency under a shared CPU and answers CPU-bound "
                 "comparisons, not stacks limited by waiting (a database behind few workers).")
        text += waiting_sides(duet)
    return text


def _method_head(method: Method, rows: list[Row], *, named: bool) -> str:
    """'Method: duet, 8 rounds in 4 launch(es), 4s windows after 0.25s settles', with the
    workloads it measured when the run used more than one method."""
    spec = rows[0].spec
    which = f" for {', '.join(sorted({r.spec.workload for r in rows}))}" if named else ""
    return (f"Method{which}: {method}, {max(r.rounds for r in rows)} rounds in {max(r.launches for r in rows)} "
            f"launch(es), {window_seconds(spec):g}s windows after {spec.settle_s:g}s settles")


DUET_WAITING_SHARE = 0.7
"""A duet side that used less than this part of its equal CPU share was waiting, not computing
(the CPU-bound sides of the committed duet runs used 0.92-1.0 of it)."""


def waiting_sides(rows: list[Row]) -> str:
    """The duet rows measured, not assumed, to be limited by waiting: their ratio is not the answer
    an interleaved run would give (the method is chosen per workload by this reading)."""
    waiting = sorted({f"{r.label} on {r.spec.workload} ({r.cpu_percent:.0f}% of a CPU)" for r in rows
                      if r.cpu_percent is not None and r.spec.stack_cpus
                      and r.cpu_percent / 100 < DUET_WAITING_SHARE * len(r.spec.stack_cpus) / 2})
    if not waiting:
        return ""
    return (f" Waiting, not computing: {'; '.join(waiting)} used under {DUET_WAITING_SHARE:.0%} of an equal CPU "
            "share in their windows, so their duet ratios say little about them; measure those workloads with "
            "--method interleaved.")
