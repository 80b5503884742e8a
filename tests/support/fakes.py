"""Fakes shared by unit tests: a catalog stack backed by the stdlib server, a no-op env builder."""

from __future__ import annotations

import sys
from pathlib import Path

from pywebbench.catalog.model import ConcurrencyType, Framework, Interface, LaunchSpec, ServerVariant, Stack
from pywebbench.stage.envs import BuiltEnv, EnvSpec
from pywebbench.results.model import EnvironmentRecord

HELLO_SERVER = Path(__file__).with_name("hello_server.py")


def stdlib_stack(mode: str = "ok", name: str = "stdlib") -> Stack:
    def argv(spec: LaunchSpec) -> list[str]:
        return [sys.executable, str(HELLO_SERVER), "--port", str(spec.port), "--mode", mode]

    server = ServerVariant(
        server=name, variant=mode, title="stdlib http.server", worker_class="threads",
        interface=Interface.WSGI, concurrency=ConcurrencyType.SYNC, requirements=(), build_argv=argv,
    )
    framework = Framework("flask", "Flask", frozenset({Interface.WSGI}), ())
    return Stack(framework, server)


class CurrentPythonBuilder:
    """Hands out the test interpreter's own prefix instead of building anything."""

    def ensure(self, spec: EnvSpec, *, retry_failed: bool = False) -> BuiltEnv:
        record = EnvironmentRecord("test", sys.version.split()[0], spec.requirements, spec.overrides, ())
        return BuiltEnv(Path(sys.prefix), record, reused=True)
