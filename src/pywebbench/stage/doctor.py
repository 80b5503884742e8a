"""What the harness needs on this machine, what is missing, and the command that fixes it."""

from __future__ import annotations

import sysconfig
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError
from pywebbench.plan.generators import GENERATOR_NAMES, ChosenBy, Generator, Loop, chosen_by, default_generator
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Plan, needs_of
from pywebbench.stage.envs import uv_binary
from pywebbench.stage.tools import locate


@dataclass(frozen=True)
class Requirement:
    name: str
    purpose: str
    present: bool
    detail: str
    fix: str
    required: bool = True


def _command(name: str, purpose: str, package: str, required: bool = True) -> Requirement:
    path = locate(name)
    return Requirement(name, purpose, path is not None, path or "not found",
                       f"sudo apt-get install -y {package}", required)


def _header(name: str, path: Path, purpose: str, package: str) -> Requirement:
    return Requirement(name, purpose, path.exists(), str(path), f"sudo apt-get install -y {package}", False)


def generator_requirements() -> list[Requirement]:
    """Each registered load generator's own declaration of what it needs (its Capabilities.need)."""
    found = []
    for name in GENERATOR_NAMES:
        need = Generator(name).capabilities.need
        path = locate(need.binary)
        detail = (need.detail or path) if path is not None else need.missing
        found.append(Requirement(name, need.purpose, path is not None, detail or need.missing, need.fix,
                                 need.required))
    return found


def check() -> list[Requirement]:
    try:
        uv = uv_binary()
        uv_ok = True
    except FileNotFoundError:
        uv, uv_ok = "not found", False
    python_h = Path(sysconfig.get_paths()["include"]) / "Python.h"
    toxiproxy = locate("toxiproxy-server")
    return [
        *generator_requirements(),
        _command("openssl", "makes each run's certificate for --protocol h1-tls and h2-tls", "openssl",
                 required=False),
        _command("taskset", "pins stack and generator to disjoint CPUs", "util-linux"),
        Requirement("py-spy", "samples the servers' processes for --profile (a dependency of pywebbench)",
                    locate("py-spy") is not None, locate("py-spy") or "not found", "./scripts/install.sh", False),
        Requirement("uv", "builds each stack's isolated environment", uv_ok, uv, "./scripts/install.sh"),
        _command("cc", "compiles meinheld, bjoern and uWSGI from source", "build-essential", required=False),
        _command("postgres", "PostgreSQL for db, api and posts (a private instance)", "postgresql", required=False),
        _command("pgbouncer", "caps DB sessions between apps and PostgreSQL", "pgbouncer", required=False),
        _command("nginx", "static baseline and reverse proxy", "nginx-light", required=False),
        _command("go", "builds the Go reference server and the upstream API", "golang-go", required=False),
        _command("sshd", "the netns rig's per-host SSH server (several hosts on one machine)", "openssh-server",
                 required=False),
        Requirement("toxiproxy-server", "delays links between hosts (no netem in this kernel)",
                    toxiproxy is not None, toxiproxy or "not built yet",
                    "built on first use (go install github.com/Shopify/toxiproxy/v2/cmd/server)", False),
        _header("libev", Path("/usr/include/ev.h"), "bjoern's event loop", "libev-dev"),
        Requirement("Python.h", "compiling C servers against this Python", python_h.exists(), str(python_h),
                    "sudo apt-get install -y python3-dev", False),
    ]


def check_tools(plan: Plan, options: RunOptions) -> None:
    """A missing tool is a one-line error before anything starts, never a failure mid-run."""
    wanted = {options.generator, "taskset", "uv"}
    if options.method.paired:
        wanted.add(default_generator(Loop.CLOSED))  # each window's settle: measure/settle.py
    needs = {n.value for n in needs_of(plan)}
    if "database" in needs:
        wanted |= {"postgres", "pgbouncer"}
    if "upstream" in needs or any(s.stack.server.native == "go-reference" for s in plan.sessions):
        wanted.add("go")
    if any(w.schedule is not None for s in plan.sessions for w in s.workloads):
        wanted.add(chosen_by(ChosenBy.REPLAY))
    if any(w.shape is not None and w.shape.drive.command for s in plan.sessions for w in s.workloads):
        wanted |= {chosen_by(ChosenBy.SHAPE), "go"}
    if any(t.protocol not in (None, "h1") for s in plan.sessions for t in s.trials):
        wanted |= {chosen_by(ChosenBy.PROTOCOL), "openssl"}
    if options.profile:
        wanted.add("py-spy")
    if options.topology == "nginx" or any(s.stack.server.native == "nginx" for s in plan.sessions):
        wanted.add("nginx")
    missing = [r for r in check() if r.name in wanted and not r.present]
    if missing:
        first = missing[0]
        raise UserError(f"{first.name} is missing ({first.purpose}); fix: {first.fix}")
