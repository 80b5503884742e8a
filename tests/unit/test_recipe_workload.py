"""docs/layout.md's workload recipe kept true: a workload is its `Workload` and one line of the apps'
route table, which every framework's app module picks up; one left out of a place fails here.
The same throwaway route on real servers: tests/integration/test_recipe_workload.py."""

from __future__ import annotations

import ast
from dataclasses import replace

from pywebbench.catalog.frameworks import FRAMEWORKS
from pywebbench.catalog.workloads import WORKLOADS, Workload
from support.workload_recipe import Places, RouteLine, problems, pwb_routes, read_places, route_lines

THROWAWAY = Workload("recipe-cpu", "/recipe-cpu", "application/json", "the recipe test's own route",
                     WORKLOADS["cpu"].check, knobs=("cpu_size",))


def _with_throwaway() -> Places:
    """The tree's places with the throwaway registered: its Workload, its route line (the table's own
    Route with an existing body), and its Go handler (which the Go reference writes itself)."""
    with pwb_routes() as table:
        line = table.Route(THROWAWAY.path, table.pwb.cpu_body, table.pwb.APPLICATION_JSON)
        routes = route_lines((*table.ROUTES, line))
    places = read_places((*WORKLOADS.values(), THROWAWAY))
    return replace(places, routes=routes, go_paths={*places.go_paths, THROWAWAY.path})


def test_every_workload_is_in_every_place_of_the_recipe() -> None:
    places = read_places(tuple(WORKLOADS.values()))
    assert problems(places) == []
    assert {r.path for r in places.routes} == {"/hello", "/db", "/upstream", "/template", "/api", "/posts", "/cpu"}
    assert set(places.app_sources) == {f.module for f in FRAMEWORKS if not f.native}  # 15 frameworks


def test_a_throwaway_workload_is_picked_up_by_every_app_module() -> None:
    places = _with_throwaway()
    assert problems(places) == []
    for module, source in places.app_sources.items():
        # each registers what the table holds when it is imported: a loop (or comprehension) over it
        loops = [node for node in ast.walk(ast.parse(source)) if isinstance(node, ast.For | ast.comprehension)
                 and "pwb_routes.ROUTES" in ast.unparse(node.iter)]
        assert loops, module


def test_the_check_names_each_place_left_out() -> None:
    places = _with_throwaway()
    no_route = replace(places, routes=[r for r in places.routes if r.path != THROWAWAY.path])
    assert problems(no_route) == ["workload recipe-cpu: no route for /recipe-cpu in apps/pwb_routes.ROUTES"]
    no_workload = replace(places, workloads=[w for w in places.workloads if w is not THROWAWAY])
    assert problems(no_workload) == ["route /recipe-cpu: no Workload in catalog/workloads.py"]
    no_go = replace(places, go_paths=set(places.go_paths) - {THROWAWAY.path})
    assert problems(no_go) == ["workload recipe-cpu: the Go reference (main.go) has no handler for /recipe-cpu"]
    wrong_type = replace(places, routes=[*no_route.routes, RouteLine(THROWAWAY.path, "text/plain; charset=utf-8")])
    assert problems(wrong_type) == ["workload recipe-cpu: its route answers 'text/plain; charset=utf-8', "
                                    "the Workload expects 'application/json'"]
    unknown_knob = replace(places, workloads=[*no_workload.workloads, replace(THROWAWAY, knobs=("sieve",))])
    assert problems(unknown_knob) == ["workload recipe-cpu: 'sieve' is not a sweep knob (plan/sweep.Knob)"]


def test_an_app_module_that_writes_a_route_by_hand_or_skips_the_table_is_named() -> None:
    places = _with_throwaway()
    flask = places.app_sources["app_flask"]
    by_hand = flask + '\n\n@app.get("/recipe-cpu")\ndef recipe() -> Response:\n    return Response(b"")\n'
    assert problems(replace(places, app_sources={**places.app_sources, "app_flask": by_hand})) == \
        ["app_flask: writes the route /recipe-cpu by hand"]
    skipped = flask.replace("for route in pwb_routes.ROUTES:", "for route in ():")
    assert problems(replace(places, app_sources={**places.app_sources, "app_flask": skipped})) == \
        ["app_flask: registers no routes from pwb_routes.ROUTES"]
