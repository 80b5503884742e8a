"""What `pywebbench list` knows of each stack: its facts and whether it can run here."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from pywebbench.catalog.model import Stack
from pywebbench.stage.envs import EnvironmentBuilder, EnvSpec


@dataclass(frozen=True)
class StackListing:
    stack: str
    framework: str
    server: str
    worker_class: str | None
    interface: str
    type: str
    event_loop: str | None
    http_parser: str | None
    available: bool
    reason: str | None
    environment: str
    """`built` or `not built yet`."""
    requirements: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["requirements"] = list(self.requirements)
        return data


def listing(stacks: Sequence[Stack], builder: EnvironmentBuilder, *, build: bool = False) -> list[StackListing]:
    """Each stack's facts; with `build`, missing environments are built first (a failure is a reason)."""
    rows = []
    for stack in stacks:
        spec = EnvSpec(stack.requirements, stack.overrides, sys.executable)
        reason = stack.unavailable
        if reason is None and build:
            try:
                builder.ensure(spec)
            except Exception as exc:  # reported per stack, never fatal to the listing
                reason = f"environment build failed: {exc}"
        if reason is None:
            failed = builder.failure(spec)
            reason = f"environment build failed: {failed}" if failed else None
        rows.append(StackListing(
            stack=stack.id, framework=stack.framework.title, server=stack.server.title,
            worker_class=stack.server.worker_class, interface=stack.server.interface.value,
            type=stack.concurrency.value, event_loop=stack.server.event_loop,
            http_parser=stack.server.http_parser, available=reason is None, reason=reason,
            environment="built" if builder.cached(spec) else "not built yet",
            requirements=tuple(stack.requirements),
        ))
    return rows
