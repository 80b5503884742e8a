"""The command that deploys a configuration: the server's own argv builder, bound for a real host.

The one source of deploy commands: `run --tune`'s winners, `app`'s servers and `app --tune`'s
winners all come from here. The same builder made the command the harness measured, so the
deploy line differs from it only where a deployment must: the interpreter is `python` (or the
server's console script), the address is every interface on a fixed port, and no CPU pinning
or cgroup goes before it. A person's own app (a Framework with a `target`) is served as
`module:callable`, with each server's way of calling a factory.
"""

from __future__ import annotations

import shlex

from pywebbench.catalog.model import LaunchSpec, Stack

DEPLOY_HOST = "0.0.0.0"
DEPLOY_PORT = 8000
CONSOLE_SCRIPTS = frozenset({"gunicorn", "uvicorn", "hypercorn", "granian"})
"""Servers whose `python -m NAME` is also installed as the command `NAME`."""


def deploy_argv(stack: Stack, workers: int, threads: int, *, module: str | None = None,
                host: str = DEPLOY_HOST, port: int = DEPLOY_PORT) -> tuple[str, ...]:
    """The server's command line for this many workers and threads; `module` replaces the
    catalog app's module. A framework with a target (`app`) keeps its target and factory.
    ValueError if the server cannot serve it (a reference server; a factory uWSGI cannot call)."""
    if stack.server.native is not None:
        raise ValueError(f"{stack.id} is a reference server, not deployed from a Python environment")
    framework = stack.framework
    argv = stack.server.build_argv(LaunchSpec("python", module or framework.module, host, port, workers, threads,
                                              target=framework.target, factory=framework.factory))
    if argv[:2] == ["python", "-m"] and len(argv) > 2 and argv[2] in CONSOLE_SCRIPTS:
        argv = argv[2:]
    return tuple(argv)


def deploy_command(stack: Stack, workers: int, threads: int, *, module: str | None = None,
                   host: str = DEPLOY_HOST, port: int = DEPLOY_PORT) -> str:
    return shlex.join(deploy_argv(stack, workers, threads, module=module, host=host, port=port))
