"""docs/connections.md: the connection shapes (issue 50) across worker models, rendered from what
scripts/connections-page kept under docs/results/connections/NAME/: results.jsonl, run.json (the
command, its exit and wall time) and console.txt (whose `skipped` lines say which stack could not
serve which shape, and why). Every figure carries its 95% interval (Student's t over the stack's
launch means, analyze/shape_figures.py)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pywebbench.analyze.rows import Row, latest_trials, summarize
from pywebbench.analyze.shape_figures import figure
from pywebbench.measure.checks import check_name
from pywebbench.plan.knob_values import knob_value
from pywebbench.report.markdown import escape
from pywebbench.report.pages.page_runs import PagePart, load_part, machine_and_commands
from pywebbench.report.pages.connections_words import cell, idle_paragraph, model_of
from pywebbench.results.model import ResultSet, TrialResult

FOLDER = "connections"
SCRIPT = "scripts/connections-page"
STACKS = ("flask:gunicorn-sync", "flask:gunicorn-gthread", "flask:gunicorn-gevent", "django:gunicorn-sync",
          "starlette:uvicorn", "starlette:granian", "aiohttp:aiohttp")
"""Sync, threaded, greenlet and event-loop stacks, in the page's order."""
PROTOCOL_STACKS = ("starlette:granian", "starlette:hypercorn")


@dataclass(frozen=True)
class Part:
    name: str
    """Its folder under docs/results/connections/ and its argument to scripts/connections-page."""
    title: str
    about: str


PARTS = (
    Part("idle", "Idle connections at 100 to 10,000",
         "N idle keep-alive connections held open while 200 req/s run open loop on 4 others: the server's RSS "
         "per idle connection and the kernel's socket memory per connection, the active requests' p99, and "
         "the idle connections still held at the window's end, refused, or closed by the server."),
    Part("close", "A new connection per request", "`Connection: close` on every request: accept and each "
         "server's per-connection set-up, which keep-alive hides."),
    Part("stream", "Streamed answers and uploads", "A 1 MiB answer in 64 KiB chunks (stream) and a 1 MiB "
         "request body read and counted (upload): MB/s and the server's CPU seconds per MB."),
    Part("sse", "Server-sent events", "10 events a second to each of N clients: events delivered per second "
         "and the delivery latency's p99."),
    Part("ws-echo", "WebSocket echo", "Each of N connections sends its next 32-byte message when the last came "
         "back: messages per second and the round trip's p99."),
    Part("protocols", "HTTP/1.1, HTTP/2 and TLS on Granian and Hypercorn",
         "`hello` over h1, h2c (HTTP/2 in the clear), h1-tls and h2-tls (TLS terminated by the app server), "
         "h2load sending every protocol but h1: req/s and p99."),
)


@dataclass(frozen=True)
class Measured:
    part: PagePart
    rows: tuple[Row, ...]
    skipped: tuple[str, ...]

    @property
    def run(self) -> dict[str, Any]:
        return self.part.run

    @property
    def results(self) -> ResultSet:
        return self.part.results


def render(results: Path) -> str:
    folder = results / FOLDER
    measured = {part.name: _load(folder / part.name) for part in PARTS}
    parts = [_intro()]
    if not any(measured.values()):
        parts.append(_not_yet())
    else:
        parts.append(_machine(measured))
        parts += [_section(part, measured[part.name]) for part in PARTS]
        parts.append(_ceilings(measured))
    return "\n\n".join(parts).rstrip() + "\n"


def _load(folder: Path) -> Measured | None:
    part = load_part(folder)
    if part is None:
        return None
    console = (folder / "console.txt").read_text().splitlines() if (folder / "console.txt").exists() else []
    return Measured(part, summarize(part.results).rows,
                    tuple(line.strip() for line in console if line.startswith("skipped ")))


def _intro() -> str:
    return (
        "# Connections: idle, short-lived, streamed, server-sent events, WebSocket, HTTP/2 and TLS\n\n"
        "<!-- Built by scripts/docs from docs/results/connections/; edit "
        "src/pywebbench/report/pages/connections.py, not this file. -->\n\n"
        "Sync, threaded, greenlet and event-loop stacks on the connection shapes where they part ways "
        "(issue 50; the shapes are described in [stacks-and-workloads.md](reference/stacks-and-workloads.md#connection-shapes)). "
        f"`{SCRIPT}` makes every run below, one after the other, on a quiet machine. Each figure is the mean of "
        "the stack's launch means with its 95% interval, Student's t over those launch means (a launch is the "
        "unit of replication: windows of one server start share its state); rates, latencies, MB/s and CPU per "
        "MB on the log scale, their geometric mean and an interval that stays above zero; a figure from one "
        "launch says so.")


def _not_yet() -> str:
    commands = "\n".join(f"{SCRIPT} {part.name}" for part in PARTS)
    return ("## Not measured yet\n\nNo results are committed under `docs/results/connections/`. On a quiet "
            f"machine, alone, run every part (`{SCRIPT}`, about 45 minutes on the 2-core VM) or one at a time:\n\n"
            f"```sh\n{commands}\n```\n\nthen `scripts/docs` to rebuild this page.")


def _machine(measured: dict[str, Measured | None]) -> str:
    return machine_and_commands({name: found.part if found else None for name, found in measured.items()})


def _section(part: Part, found: Measured | None) -> str:
    head = f"## {part.title}\n\n{part.about}"
    if found is None:
        return f"{head}\n\nNot measured yet: `{SCRIPT} {part.name}`."
    body = _protocols(found) if part.name == "protocols" else _shape_tables(found)
    if part.name == "idle":
        body += "\n\nWhat each worker model did at each N (written from the figures above):\n\n" + "\n".join(
            idle_paragraph([r for r in found.rows if r.spec.workload == "idle"])) + _file_limits(found.results)
    if found.skipped:
        body += "\n\nLeft out, in the run's own words:\n\n" + "\n".join(f"- {escape(s)}" for s in found.skipped)
    return f"{head}\n\n{body}"


def _file_limits(results: ResultSet) -> str:
    """The file limits the driver and the servers ran with at the most connections, as each window read them."""
    shapes = [t.load.shape for t in results.trials if t.load is not None and t.load.shape is not None]
    if not shapes:
        return ""
    most = max(s.asked for s in shapes)
    at = [s for s in shapes if s.asked == most]

    def limits(values: Sequence[int | None]) -> str:
        found = sorted({v for v in values if v is not None})
        return "not read" if not found else f"{found[0]:,}" if len(found) == 1 else f"{found[0]:,}-{found[-1]:,}"

    return (f"\n\nFile limits at {most:,} connections, as each window read them: the driver ran with "
            f"{limits([s.nofile for s in at])} (RLIMIT_NOFILE), the servers with {limits([s.server_nofile for s in at])}.")


def _ordered(rows: Sequence[Row]) -> list[Row]:
    return sorted(rows, key=lambda r: (STACKS.index(r.label) if r.label in STACKS else len(STACKS), r.label))


HEADS: dict[str, tuple[tuple[str, str, str], ...]] = {
    "idle": (("RSS KB/conn", "rss_kb_per_connection", ".1f"), ("Socket KB/conn", "socket_kb_per_connection", ".2f"),
             ("Active p99 ms", "p99_ms", "ms")),
    "close": (("Req/s", "rate", ",.0f"), ("p99 ms", "p99_ms", "ms")),
    "stream": (("MB/s", "mb_s", ",.1f"), ("CPU s/MB", "cpu_s_per_mb", ".4f")),
    "upload": (("MB/s", "mb_s", ",.1f"), ("CPU s/MB", "cpu_s_per_mb", ".4f")),
    "sse": (("Events/s", "rate", ",.0f"), ("Delivery p99 ms", "p99_ms", "ms")),
    "ws-echo": (("Messages/s", "rate", ",.0f"), ("Round-trip p99 ms", "p99_ms", "ms")),
}
"""Each shape's figures on the page: heading, ShapeRow field, format."""
COUNTED = ("idle", "sse")
"""Shapes whose driver counts the connections held, refused and closed."""


def _shape_tables(found: Measured) -> str:
    tables = []
    workloads = list(dict.fromkeys(r.spec.workload for r in found.rows))  # as the run listed them
    keys = {(r.spec.workload, knob_value(r.spec, "connections")) for r in found.rows}
    for key in sorted(keys, key=lambda k: (workloads.index(k[0]), k[1])):  # N ascending, not as rounds ran
        workload, connections = key
        rows = _ordered([r for r in found.rows if (r.spec.workload, knob_value(r.spec, "connections")) == key])
        heads = HEADS.get(workload, ())
        counted = workload in COUNTED
        titles = ["Stack", "Model", *(h for h, _, _ in heads), *(["Held/refused/closed"] if counted else []),
                  "Launches", "Valid"]
        lines = [f"### {escape(workload)}, {connections:,} connections", "",
                 "| " + " | ".join(titles) + " |", "|---|---|" + "---:|" * (len(titles) - 3) + "---|"]
        for row in rows:
            shape = row.shape
            cells = [cell(getattr(shape, field) if shape else None, spec) for _, field, spec in heads]
            if counted:
                cells.append("-" if shape is None or shape.asked is None
                             else f"{shape.held:,}/{shape.refused:,}/{shape.closed:,} of {shape.asked:,}")
            lines.append(f"| `{row.label}` | {model_of(row)} | " + " | ".join(cells)
                         + f" | {row.launches} | {_validity(row)} |")
        if any(check_name(c) == "near-ceiling" for r in rows for c in r.checks):
            lines += ["", NEAR_CEILING]
        tables.append("\n".join(lines))
    return "\n\n".join(tables) if tables else "No window was measured."


def _validity(row: Row) -> str:
    """'yes' with the checks its windows raised, or 'no:' and those checks (the row's status says
    only that it ran)."""
    names = ", ".join(dict.fromkeys(check_name(c) for c in row.checks))
    if row.valid:
        return f"yes ({escape(names)})" if names else "yes"
    return f"no: {escape(names or row.status)}"


NEAR_CEILING = ("Rows marked near-ceiling reached at least 80% of what the generator reaches against a server "
                "that does nothing (the ceilings below): there the generator, not the stack, sets the figure, "
                "which bounds the stack from below.")


def _windows(results: ResultSet) -> dict[tuple[str, str], list[TrialResult]]:
    """Each stack's windows per protocol: the clean ones, or every loaded one if none is clean."""
    found: dict[tuple[str, str], list[TrialResult]] = defaultdict(list)
    for trial in latest_trials(results.trials):
        if trial.load is not None:
            found[(trial.spec.label, trial.spec.protocol or "h1")].append(trial)
    return {key: [t for t in ws if t.valid] or ws for key, ws in found.items()}


def _protocols(found: Measured) -> str:
    lines = ["| Stack | Protocol | Req/s | p99 ms | Launches | Valid |", "|---|---|---:|---:|---:|---|"]
    windows = _windows(found.results)
    order = ("h1", "h2c", "h1-tls", "h2-tls")
    for (label, protocol), ws in sorted(windows.items(), key=lambda kv: (kv[0][0], order.index(kv[0][1])
                                                                        if kv[0][1] in order else 9)):
        rps = figure(ws, lambda t: t.load.rps if t.load else None, positive=True)
        p99 = figure(ws, lambda t: t.load.latency.at(99.0) if t.load else None, positive=True)
        valid = all(t.valid for t in ws)
        lines.append(f"| `{label}` | {protocol} | {cell(rps, ',.0f')} | {cell(p99, 'ms')} | "
                     f"{rps.launches if rps else 0} | {'yes' if valid else 'no'} |")
    generators = sorted({t.load.generator for ws in windows.values() for t in ws if t.load is not None})
    return "\n".join(lines) + f"\n\nGenerators: {', '.join(generators) or 'none recorded'}."


def _ceilings(measured: dict[str, Measured | None]) -> str:
    """What each generator could do against a server that costs nothing, as the runs recorded it."""
    lines = ["## The generators' ceilings", "",
             "Measured by each run before the shape's first window, against a server that costs nothing "
             "(`shapes serve` for the shapes, nginx static for h2load); every window was checked against them.", "",
             "| Run | Record | Generator | Workload / protocol | Connections | Rate | p99 ms | Note |",
             "|---|---|---|---|---:|---:|---:|---|"]
    count = 0
    for name, found in measured.items():
        for record in (found.results.services if found is not None else ()):
            if record.name not in ("shape-ceiling", "generator-ceiling"):
                continue
            c = record.config
            what = c.get("workload") or c.get("protocol") or "h1"
            p99 = c.get("p99_ms")
            note = c.get("error") or (f"held {c['held']:,}" if isinstance(c.get("held"), int) else "")
            lines.append(f"| {name} | {record.name} | {escape(str(c.get('generator', record.version) or '?'))} | "
                         f"{escape(str(what))} | {c.get('connections', '?')} | {_rate(c.get('rps'))} | "
                         f"{'' if not isinstance(p99, (int, float)) else format(p99, '.2f')} | {escape(str(note))} |")
            count += 1
    return "\n".join(lines) if count else lines[0] + "\n\nNo ceiling was recorded by the runs."


def _rate(value: object) -> str:
    return format(value, ",.0f") if isinstance(value, (int, float)) else ""
