"""docs/layout.md's workload recipe as one check: a workload the Python apps serve is a `Workload` in
catalog/workloads.py and a line in the apps' route table (apps/pwb_routes.ROUTES), every app module
registers that table in its framework's idiom (and hand-writes none of its paths), the Go
reference has its own handler, and its knobs are sweep knobs. `problems` returns one line per place
left out, so a test can show each is caught."""

from __future__ import annotations

import ast
import re
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from pywebbench.catalog.servers import APPS_DIR
from pywebbench.catalog.workload_model import Workload
from pywebbench.plan.sweep import Knob

GO_REFERENCE = Path(__file__).resolve().parents[2] / "src/pywebbench/stage/reference/go/cmd/reference/main.go"
TABLE = "pwb_routes.ROUTES"


@dataclass(frozen=True)
class RouteLine:
    """What the recipe asks of a pwb_routes.Route: its path and content type."""

    path: str
    content_type: str


@dataclass(frozen=True)
class Places:
    """Every place a workload is declared, as read from the tree (or as a test changes them)."""

    workloads: Sequence[Workload]
    routes: Sequence[RouteLine]
    app_sources: Mapping[str, str]
    """app_NAME -> its source text."""
    go_paths: Collection[str]


@contextmanager
def pwb_routes() -> Iterator[ModuleType]:
    """apps/pwb_routes imported as the apps import it (apps/ on the path), then forgotten again."""
    sys.path.insert(0, str(APPS_DIR))
    try:
        import pwb_routes as module  # type: ignore[import-not-found]  # apps/ is on the path only here

        yield module
    finally:
        sys.path.remove(str(APPS_DIR))
        for name in ("pwb_routes", "pwb_common", "pwb_contract", "pwb_sync", "pwb_async", "pwb_runtime"):
            sys.modules.pop(name, None)


def route_lines(routes: Iterable[object]) -> tuple[RouteLine, ...]:
    return tuple(RouteLine(getattr(r, "path"), getattr(r, "content_type")) for r in routes)


def read_places(workloads: Sequence[Workload]) -> Places:
    with pwb_routes() as module:
        routes = route_lines(module.ROUTES)
    sources = {p.stem: p.read_text(encoding="utf-8") for p in sorted(APPS_DIR.glob("app_*.py"))}
    go = set(re.findall(r'mux\.HandleFunc\("(/[^"]*)"', GO_REFERENCE.read_text(encoding="utf-8")))
    return Places(workloads, routes, sources, go)


def app_served(workloads: Iterable[Workload]) -> list[Workload]:
    """The built-in workloads the Python apps' route table serves (not nginx's static file, not a
    connection shape, whose routes are apps/pwb_shapes_*.py's, not a person's own traffic)."""
    return [w for w in workloads if not w.nginx_only and w.shape is None and not w.requests]


def problems(places: Places) -> list[str]:
    """One line per place a workload or route is missing from; [] when the recipe holds."""
    found: list[str] = []
    routes = {r.path: r for r in places.routes}
    if len(routes) != len(places.routes):
        found.append("apps/pwb_routes.ROUTES declares a path twice")
    served = app_served(places.workloads)
    for workload in served:
        route = routes.get(workload.path)
        if route is None:
            found.append(f"workload {workload.name}: no route for {workload.path} in apps/pwb_routes.ROUTES")
        elif route.content_type.partition(";")[0].strip() != workload.media_type:
            found.append(f"workload {workload.name}: its route answers {route.content_type!r}, "
                         f"the Workload expects {workload.media_type!r}")
        if workload.path not in places.go_paths:
            found.append(f"workload {workload.name}: the Go reference (main.go) has no handler for {workload.path}")
        knobs = {k.value for k in Knob}
        found.extend(f"workload {workload.name}: {k!r} is not a sweep knob (plan/sweep.Knob)"
                     for k in workload.knobs if k not in knobs)
    declared = {w.path for w in served}
    found.extend(f"route {path}: no Workload in catalog/workloads.py" for path in routes if path not in declared)
    for module, source in sorted(places.app_sources.items()):
        found.extend(f"{module}: {line}" for line in _app_problems(source, routes))
    return found


def _app_problems(source: str, routes: Mapping[str, RouteLine]) -> list[str]:
    """An app module registers the table's routes by looping over it, and names none of their paths
    itself (a hand-added view would go stale the day its workload changes)."""
    tree = ast.parse(source)
    loops = any(isinstance(node, ast.Attribute) and ast.unparse(node) == TABLE for node in ast.walk(tree))
    found = [] if loops else [f"registers no routes from {TABLE}"]
    names = {path: path for path in routes} | {path.lstrip("/"): path for path in routes}
    literals = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    found.extend(f"writes the route {names[text]} by hand" for text in sorted(literals & set(names)))
    return found
