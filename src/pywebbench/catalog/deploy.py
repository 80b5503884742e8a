"""The command that deploys a configuration: the server's own argv builder, bound for a real host.

The same builder made the command the harness measured, so the deploy line differs from it
only where a deployment must: the interpreter is `python` (or the server's console script),
the address is every interface on a fixed port, and no CPU pinning or cgroup goes before it.
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
    catalog app's module (a user's own app)."""
    if stack.server.native is not None:
        raise ValueError(f"{stack.id} is a reference server, not deployed from a Python environment")
    argv = stack.server.build_argv(LaunchSpec("python", module or stack.framework.module, host, port,
                                              workers, threads))
    if argv[:2] == ["python", "-m"] and len(argv) > 2 and argv[2] in CONSOLE_SCRIPTS:
        argv = argv[2:]
    return tuple(argv)


def deploy_command(stack: Stack, workers: int, threads: int, *, module: str | None = None,
                   host: str = DEPLOY_HOST, port: int = DEPLOY_PORT) -> str:
    return shlex.join(deploy_argv(stack, workers, threads, module=module, host=host, port=port))
