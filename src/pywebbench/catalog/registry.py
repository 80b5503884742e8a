"""The catalog: every framework and server variant, and every valid pairing of the two."""

from __future__ import annotations

from dataclasses import dataclass

from pywebbench.catalog.frameworks import FRAMEWORKS
from pywebbench.catalog.model import Framework, Interface, ServerVariant, Stack
from pywebbench.catalog.servers import SERVERS, STACK_EXCEPTIONS
from pywebbench.catalog.workloads import Workload, get_workload
from pywebbench.core.errors import UserError

BASELINE_STACK = "flask:gunicorn-sync"


def pairing_problem(framework: Framework, server: ServerVariant) -> str | None:
    """Why this framework cannot run on this server, or None when it can."""
    if server.only_frameworks is not None and server.interface is Interface.OWN:
        if framework.name not in server.only_frameworks:
            return f"{server.title} ({server.key}) serves only {', '.join(sorted(server.only_frameworks))}"
        return None
    if server.own_framework is not None:
        if server.own_framework != framework.name:
            return f"{server.title} is {server.own_framework}'s own server; it runs no other framework"
        return None
    if server.only_frameworks is not None and framework.name not in server.only_frameworks:
        allowed = ", ".join(sorted(server.only_frameworks))
        return f"{server.title} ({server.key}) serves only {allowed}"
    if server.interface not in framework.interfaces:
        offered = "/".join(sorted(i.value for i in framework.interfaces if i is not Interface.OWN))
        return (
            f"{framework.title} is an {offered} app and {server.key} serves {server.interface.value} only"
        )
    return None


@dataclass(frozen=True)
class Catalog:
    frameworks: tuple[Framework, ...]
    servers: tuple[ServerVariant, ...]
    stacks: tuple[Stack, ...]
    workloads: tuple[Workload, ...] = ()
    """Workloads of this catalog beyond the built-in ones (a person's own traffic mix)."""

    def workload(self, name: str) -> Workload:
        """This catalog's own workload of that name, else the built-in one (or a one-line error)."""
        own = next((w for w in self.workloads if w.name == name), None)
        return own if own is not None else get_workload(name)

    def framework(self, name: str) -> Framework | None:
        return next((f for f in self.frameworks if f.name == name), None)

    def resolve(self, stack_id: str) -> Stack:
        """The stack with this id, or a one-line error that says why there is none."""
        for stack in self.stacks:
            if stack.id == stack_id:
                return stack
        fw_name, _, server_key = stack_id.partition(":")
        framework = self.framework(fw_name)
        if framework is None:
            known = ", ".join(f.name for f in self.frameworks)
            raise UserError(f"unknown framework {fw_name!r} in {stack_id!r}; known: {known}")
        variants = [s for s in self.servers if s.key == server_key or s.server == server_key]
        if not variants:
            known = ", ".join(sorted({s.key for s in self.servers}))
            raise UserError(f"unknown server {server_key!r} in {stack_id!r}; known: {known}")
        exact = [s for s in variants if s.key == server_key]
        if not exact:
            default = next((s for s in variants if s.variant == _default_variant(s.server)), None)
            if default is not None:
                candidate = f"{fw_name}:{default.key}"
                for stack in self.stacks:
                    if stack.id == candidate:
                        return stack
            exact = variants
        problem = pairing_problem(framework, exact[0])
        raise UserError(f"{stack_id} is not a valid pairing: {problem or 'not in the catalog'}")


def _default_variant(server: str) -> str:
    return {"gunicorn": "sync", "uvicorn": "", "hypercorn": "", "granian": ""}.get(server, "")


def build_catalog() -> Catalog:
    stacks: list[Stack] = []
    for framework in FRAMEWORKS:
        for server in SERVERS:
            if pairing_problem(framework, server) is not None:
                continue
            stack = Stack(framework, server)
            exception = STACK_EXCEPTIONS.get(stack.id)
            if exception is not None:
                stack = exception(stack)
            stacks.append(stack)
    return Catalog(FRAMEWORKS, SERVERS, tuple(stacks))
