"""The benchmark app's routes, declared once: each CONTRACT.md endpoint's path, its body in
pwb_common, its content type, and the coroutine an asyncio app awaits instead when the route
waits on a service.

Every app_*.py registers these in its framework's own idiom (one small adapter: how the
framework adds a GET route answering bytes with a content type, then a loop over ROUTES), so
the framework's router still routes every request. A new workload's route is one line here and
its `Workload` one line in the harness's catalog/workloads.py; tests/unit/test_recipe_workload.py
holds the two to each other and every app module to this table. Standard library only, as
pwb_common.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
import pwb_common as pwb

SyncBody = Callable[[], bytes]
AsyncBody = Callable[[], Awaitable[bytes]]


@dataclass(frozen=True)
class Route:
    path: str
    body: SyncBody
    """What a WSGI app answers (and an asyncio app runs right on its loop when it has no coroutine)."""
    content_type: str
    body_async: AsyncBody | None = None
    """The coroutine of a route that waits on a service (asyncpg, aiohttp); None: no service."""

    @property
    def name(self) -> str:
        """The view's name, for frameworks that name their routes (unique per path)."""
        return self.path.strip("/")

    @property
    def waits_on_service(self) -> bool:
        return self.body_async is not None

    def on_loop(self) -> AsyncBody:
        """What an asyncio app awaits: the service's coroutine under an async driver; under a
        sync one (seed 001's blocking variant) the sync body, right on the loop, on purpose."""
        if self.body_async is not None and pwb.is_async_driver():
            return self.body_async
        return pwb.on_loop(self.body)


ROUTES: tuple[Route, ...] = (
    Route("/hello", pwb.hello_body, pwb.TEXT_PLAIN),
    Route("/db", pwb.db, pwb.APPLICATION_JSON, pwb.db_async),
    Route("/upstream", pwb.upstream, pwb.APPLICATION_JSON, pwb.upstream_async),
    Route("/template", pwb.template_body, pwb.TEXT_HTML),
    Route("/api", pwb.api, pwb.APPLICATION_JSON, pwb.api_async),
    Route("/posts", pwb.posts, pwb.APPLICATION_JSON, pwb.posts_async),
    Route("/cpu", pwb.cpu_body, pwb.APPLICATION_JSON),
)
