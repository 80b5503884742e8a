"""The CLI's small tables (stacks, presets, doctor), rendered to text from values."""

from __future__ import annotations

import io
from collections.abc import Iterable, Sequence

from rich.console import Console
from rich.table import Table

from pywebbench.stage.listing import StackListing
from pywebbench.stage.doctor import Requirement
from pywebbench.stage.hostcheck import HostReport
from pywebbench.plan.presets import Preset

WIDTH = 160


def _text(table: Table) -> str:
    buffer = io.StringIO()
    Console(file=buffer, width=WIDTH, force_terminal=False, color_system=None).print(table)
    return buffer.getvalue()


def render_stacks(rows: Sequence[StackListing]) -> str:
    table = Table(title=f"{len(rows)} stacks ({len([r for r in rows if r.available])} available)")
    for col in ("Stack", "Interface", "Type", "Loop / parser", "Available"):
        table.add_column(col)
    for r in rows:
        avail = ("yes" + ("" if r.environment == "built" else " (env not built yet)")) if r.available \
            else f"no: {r.reason}"
        table.add_row(r.stack, r.interface, r.type, f"{r.event_loop} / {r.http_parser}", avail)
    return _text(table)


def render_presets(presets: Iterable[Preset]) -> str:
    table = Table(title="presets: `pywebbench run --preset NAME`")
    for col in ("Preset", "Seed", "What it reproduces"):
        table.add_column(col)
    for preset in presets:
        table.add_row(preset.name, str(preset.seed), preset.title)
    return _text(table)


def render_host_doctor(reports: Sequence[HostReport]) -> str:
    table = Table(title="pywebbench doctor --hosts")
    for col in ("Host", "Need", "For", "Status", "Fix"):
        table.add_column(col)
    for report in reports:
        host = report.host
        table.add_row(host.name, "ssh", ", ".join(r.value for r in host.roles),
                      f"ok: {host.address}:{host.port}, {report.cpus} CPUs, {report.rtt_s * 1000:.0f} ms probe", "")
        for f in report.findings:
            table.add_row("", f.name, f.purpose, ("ok: " if f.present else "MISSING: ") + f.detail,
                          "" if f.present else f.fix + ("" if f.required else " (optional)"))
    return _text(table)


def render_doctor(requirements: Sequence[Requirement]) -> str:
    table = Table(title="pywebbench doctor")
    for col in ("Need", "For", "Status", "Fix"):
        table.add_column(col)
    for r in requirements:
        table.add_row(r.name, r.purpose, ("ok: " if r.present else "MISSING: ") + r.detail,
                      "" if r.present else r.fix + ("" if r.required else " (optional)"))
    return _text(table)
