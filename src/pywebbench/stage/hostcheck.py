"""`doctor --hosts`: what each inventory host has for its roles, asked over SSH in one probe.

Every host needs SSH that lets us in and Python 3.11+. The app host needs uv: it builds its stack
environments there, cached by the same hash as here. Other hosts get the roles' tree built here
and staged (stage/staging.py), so uv there is reported, not required. Then each role's tools: the generator's
wrk (oha optional), the db's PostgreSQL and pgbouncer, the proxy's nginx (the upstream's Go
binary and Toxiproxy are built here and staged there: stage/staging.py).
CPU count and clock offset (remote clock minus ours, at the midpoint of the round trip) come
along: a generator whose clock is off by more than a window cannot share a window's barrier.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.plan.hosts import Host, Inventory, Role
from pywebbench.stage.ssh import SshConnection, SshError, SshTarget

MIN_PYTHON = (3, 11)
MAX_CLOCK_OFFSET_S = 0.5


@dataclass(frozen=True)
class Tool:
    name: str
    probe: str
    """A shell test that prints the tool's path (or nothing)."""
    fix: str
    """The command that installs it."""
    required: bool = True


def _which(name: str, *extra: str) -> str:
    places = " ".join(shlex.quote(p) for p in extra)
    return (f'p=$(command -v {name} 2>/dev/null); if [ -z "$p" ]; then for c in {places}; do '
            f'[ -x "$c" ] && p="$c" && break; done; fi; echo "$p"') if extra else f"command -v {name} 2>/dev/null; true"


TOOLS: dict[Role, tuple[Tool, ...]] = {
    Role.GENERATOR: (Tool("wrk", _which("wrk"), "sudo apt-get install -y wrk"),
                     Tool("oha", _which("oha", "$HOME/.cargo/bin/oha", "$HOME/.cache/pywebbench/tools/cargo/bin/oha"),
                          "cargo install oha", required=False)),
    Role.APP: (Tool("taskset", _which("taskset"), "sudo apt-get install -y util-linux"),),
    Role.DB: (Tool("postgres", "ls -1 /usr/lib/postgresql/*/bin/postgres 2>/dev/null | sort -V | tail -1",
                   "sudo apt-get install -y postgresql"),
              Tool("pgbouncer", _which("pgbouncer", "/usr/sbin/pgbouncer"), "sudo apt-get install -y pgbouncer")),
    Role.UPSTREAM: (),  # the Go upstream is built here and staged there as a static binary
    Role.PROXY: (Tool("nginx", _which("nginx", "/usr/sbin/nginx"), "sudo apt-get install -y nginx-light"),),
}


@dataclass(frozen=True)
class HostFinding:
    name: str
    purpose: str
    present: bool
    detail: str
    fix: str
    required: bool = True


@dataclass(frozen=True)
class HostReport:
    host: Host
    findings: tuple[HostFinding, ...]
    cpus: int
    clock_offset_s: float
    rtt_s: float

    @property
    def missing(self) -> tuple[HostFinding, ...]:
        return tuple(f for f in self.findings if f.required and not f.present)


def target_of(host: Host) -> SshTarget:
    return SshTarget(host.address, host.port, host.user, host.key, host.known_hosts)


def _uv_probe(host: Host) -> str:
    if host.uv is not None:
        return f'[ -x {shlex.quote(str(host.uv))} ] && echo {shlex.quote(str(host.uv))}; true'
    return _which("uv", "$HOME/.local/bin/uv", "$HOME/.cargo/bin/uv")


def _uv_tool(host: Host) -> tuple[Role | None, Tool]:
    builds = Role.APP in host.roles
    return (Role.APP if builds else None,
            Tool("uv", _uv_probe(host), "curl -LsSf https://astral.sh/uv/install.sh | sh", required=builds))


def probe_script(host: Host) -> tuple[str, list[tuple[Role | None, Tool]]]:
    """One shell script: a `key=value` line per fact, so one SSH round trip asks everything."""
    tools: list[tuple[Role | None, Tool]] = [
        (None, Tool("python", "command -v python3 2>/dev/null; true", "sudo apt-get install -y python3")),
        _uv_tool(host),
    ]
    for role in host.roles:
        tools += [(role, t) for t in TOOLS[role]]
    lines = ["echo cpus=$(nproc)",
             "echo pyver=$(python3 -c 'import sys; print(\"%d.%d.%d\" % sys.version_info[:3])' 2>/dev/null)"]
    lines += [f"echo tool{i}=$({t.probe})" for i, (_, t) in enumerate(tools)]
    return "; ".join(lines), tools


def check_host(host: Host, control_dir: Path) -> HostReport:
    """The host's findings; an unreachable host or failed authentication raises UserError."""
    try:
        with SshConnection(target_of(host), control_dir, f"doctor-{host.name}") as conn:
            script, tools = probe_script(host)
            done = conn.run_line(script, timeout=30)
            offset, rtt = clock_offset(conn)
    except SshError as exc:
        raise UserError(f"host {host.name!r}: {exc}") from None
    facts = dict(line.split("=", 1) for line in done.stdout.splitlines() if "=" in line)
    findings = []
    for i, (role, tool) in enumerate(tools):
        path = facts.get(f"tool{i}", "").strip()
        purpose = f"{role.value} role" if role else ("every host" if tool.required else "not needed here")
        detail = path or "not found"
        present = bool(path)
        if tool.name == "python" and present:
            version = facts.get("pyver", "")
            parts = tuple(int(p) for p in version.split(".")[:2] if p.isdigit())
            present = parts >= MIN_PYTHON
            detail = f"{path} {version}" + ("" if present else f" (needs {MIN_PYTHON[0]}.{MIN_PYTHON[1]}+)")
        findings.append(HostFinding(tool.name, purpose, present, detail, tool.fix, tool.required))
    try:
        cpus = int(facts["cpus"])
    except (KeyError, ValueError):
        raise UserError(f"host {host.name!r}: the probe's answer does not parse (is its shell POSIX?)") from None
    findings.append(HostFinding("clock", "one window on every host", abs(offset) <= MAX_CLOCK_OFFSET_S,
                                f"{offset * 1000:+.1f} ms", "sudo apt-get install -y chrony", required=False))
    return HostReport(host, tuple(findings), cpus, offset, rtt)


def clock_offset(conn: SshConnection, tries: int = 3) -> tuple[float, float]:
    """Remote clock minus ours at the midpoint of the fastest of a few `date` round trips."""
    best: tuple[float, float] | None = None
    for _ in range(tries):
        sent = time.time()
        done = conn.run(["date", "+%s.%N"], timeout=15)
        back = time.time()
        try:
            remote = float(done.stdout.strip())
        except ValueError:
            raise UserError(f"{conn.name}: `date +%s.%N` answered {done.stdout.strip()[:40]!r}") from None
        if best is None or back - sent < best[1]:
            best = (remote - (sent + back) / 2, back - sent)
    assert best is not None
    return best


def check_inventory(inventory: Inventory, control_dir: Path) -> list[HostReport]:
    return [check_host(host, control_dir) for host in inventory.hosts]


def require_ready(reports: list[HostReport]) -> None:
    """Before anything starts: the first host that lacks a required thing, in one line."""
    for report in reports:
        for finding in report.missing:
            raise UserError(f"host {report.host.name!r} has no {finding.name} ({finding.purpose}): {finding.fix}")
