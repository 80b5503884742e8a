"""Starting a stack's server, one launcher per kind: a Python environment, a native binary, nginx.

Each yields a RunningServer: where it listens, how to tell it is alive, its log tail and its
root processes. The runner asks `launcher_for(stack, ...)` and never cares which it got; a
launcher for another host (the multi-host issue) is one more class behind the same Protocol.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import psutil

from pywebbench.catalog.model import LaunchSpec, Stack
from pywebbench.catalog.servers import APPS_DIR
from pywebbench.loadgen.base import taskset_prefix
from pywebbench.measure.accounting import GroupUsage
from pywebbench.measure.filelimits import nofile_prefix
from pywebbench.plan.app import APP_DIR_ENV
from pywebbench.plan.protocol_plan import app_protocol
from pywebbench.plan.sessions import Session
from pywebbench.core.procs import ManagedProcess, describe_exit, free_port
from pywebbench.results.model import StackInfo
from pywebbench.services.nginx import NginxService
from pywebbench.stage.reference import GoBinaries
from pywebbench.stage.tls import tls_material

HOST = "127.0.0.1"


@dataclass(frozen=True)
class RunningServer:
    """What the runner needs of a started server, whatever started it."""

    port: int
    argv: tuple[str, ...]
    alive: Callable[[], bool]
    log_tail: Callable[[], str]
    pids: tuple[int, ...] = ()
    """Root processes of the server, whose trees the resource sampler follows."""
    returncode: Callable[[], int | None] = lambda: None
    """How the server's main process ended (None while it runs)."""
    terminate: Callable[[], None] = lambda: None
    """Ask it to stop without waiting (the launch ends: all its servers wind down at once)."""
    host: str = HOST
    """The address it listens on: loopback here, the app host's own address on another host."""
    group_usage: Callable[[], GroupUsage | None] | None = None
    """On another host (no local pids to account): its process group's CPU so far and RSS now."""


def process_tree(roots: tuple[int, ...]) -> set[int]:
    """The live pids of the roots' trees (zombies excepted): a server's master and workers."""
    found: set[int] = set()
    for pid in roots:
        try:
            root = psutil.Process(pid)
            procs = [root, *root.children(recursive=True)]
        except psutil.Error:
            continue
        for proc in procs:
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found.add(proc.pid)
            except psutil.Error:
                continue
    return found


def server_gone(label: str, server: RunningServer) -> str:
    """One line: how a stack's server ended."""
    code = server.returncode()
    how = describe_exit(code) if code is not None else "exited"
    return f"the server of {label} {how}"


def base_environment(extra_path: str = "") -> dict[str, str]:
    """An explicit environment: nothing of the harness's own leaks into the server."""
    return {
        "PATH": f"{extra_path + ':' if extra_path else ''}/usr/local/bin:/usr/bin:/bin",
        "PYTHONPATH": str(APPS_DIR),
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "HOME": os.environ.get("HOME", "/tmp"),
        "LANG": "C.UTF-8",
        "TMPDIR": os.environ.get("TMPDIR", "/tmp"),
    }


def stack_info(stack: Stack, session: Session, env_hash: str, argv: tuple[str, ...]) -> StackInfo:
    return StackInfo(
        id=stack.id,
        framework=stack.framework.name,
        framework_title=stack.framework.title,
        server=stack.server.server,
        server_title=stack.server.title,
        variant=stack.server.variant,
        worker_class=stack.server.worker_class,
        interface=stack.server.interface.value,
        concurrency=stack.concurrency.value,
        event_loop=stack.server.event_loop,
        http_parser=stack.server.http_parser,
        workers=session.workers,
        threads=session.threads,
        env_hash=env_hash,
        argv=argv,
        driver=stack.db_client,
        db=stack.db if stack.server.native is None else "postgresql",
    )


def app_role(label: str) -> str:
    return "app-" + label.replace(":", "_").replace("#", "_").replace("/", "_")


class Launcher(Protocol):
    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> AbstractContextManager[RunningServer]:
        """Start the session's server (`prefix` runs before it: its cgroup); stop it on exit."""
        ...


@contextmanager
def _pinned_server(session: Session, program: str, prefix: Sequence[str], env: dict[str, str], logs: Path,
                   label: str) -> Iterator[RunningServer]:
    """The catalog's argv for the stack with `program`, behind `prefix` and pinned to the stack CPUs."""
    port = free_port(HOST)
    framework = session.stack.framework
    # One certificate per run, beside its logs (the run's directory), for every server that needs one.
    # None behind the nginx topology's front, which terminates TLS itself (plan/protocol_plan.py).
    tls = tls_material(logs.parent / "tls") if app_protocol(session.stack, session.trials[0]).tls else None
    launch = LaunchSpec(program, framework.module, HOST, port, session.workers, session.threads,
                        target=framework.target, factory=framework.factory, tls=tls)
    files = nofile_prefix([t.connections for t in session.trials])  # as many connections as it will hold
    argv = [*prefix, *files, *taskset_prefix(_cpus(session)), *session.stack.server.build_argv(launch)]
    # A person's own app starts in its app dir (APP_DIR_ENV), as it would be deployed.
    cwd = Path(env[APP_DIR_ENV]) if framework.target is not None and APP_DIR_ENV in env else None
    with ManagedProcess(argv, env=env, log_dir=logs, name=label, cwd=cwd) as proc:
        def tail() -> str:
            return proc.stderr_tail(15) or proc.stdout_path.read_text(errors="replace")[-1500:]

        yield RunningServer(port, tuple(argv), lambda: proc.poll() is None, tail, (proc.pid,), proc.poll,
                            proc.terminate)


@dataclass(frozen=True)
class PythonLauncher:
    """The stack's server from its uv environment."""

    env_path: Path

    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> AbstractContextManager[RunningServer]:
        bin_dir = self.env_path / "bin"
        own = dict(session.stack.framework.env)  # a person's own app: its --env and import path
        env = {**base_environment(str(bin_dir)), **own, **app_env, "VIRTUAL_ENV": str(self.env_path)}
        return _pinned_server(session, str(bin_dir / "python"), prefix, env, logs, label)


@dataclass(frozen=True)
class NativeLauncher:
    """A compiled reference server (the Go net/http one), pinned like the Python stacks."""

    binary: Path

    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> AbstractContextManager[RunningServer]:
        return _pinned_server(session, str(self.binary), prefix, {**base_environment(), **app_env}, logs, label)


class NginxLauncher:
    """nginx serving the static file itself: the machine's ceiling (seed 004's baseline)."""

    @contextmanager
    def start(self, session: Session, label: str, app_env: dict[str, str], logs: Path,
              prefix: Sequence[str]) -> Iterator[RunningServer]:
        with NginxService(logs / f"{label}.nginx", workers=session.workers) as nginx:
            yield RunningServer(nginx.info.port, ("nginx", "-c", "nginx.conf"), lambda: nginx.poll() is None,
                                lambda: "", nginx.root_pids(), nginx.poll)


class LaunchError(RuntimeError):
    """The stack's kind of server cannot be started here (no environment, no build)."""


def launcher_for(stack: Stack, env_path: Path | None, go: GoBinaries | None) -> Launcher:
    if stack.server.native == "nginx":
        return NginxLauncher()
    if stack.server.native == "go-reference":
        if go is None:
            raise LaunchError("the Go reference was not built")
        return NativeLauncher(go.reference)
    if env_path is None:
        raise LaunchError(f"{stack.id} has no environment")
    return PythonLauncher(env_path)


def _cpus(session: Session) -> tuple[int, ...]:
    return session.trials[0].stack_cpus if session.trials else ()
