import os
import re
from dataclasses import replace
from pathlib import Path
from types import MappingProxyType

import pytest

from pywebbench.catalog.registry import Catalog, build_catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.sources import from_sources
from pywebbench.plan.presets import (
    METRICS,
    PRESETS,
    Figure,
    OptionValue,
    Preset,
    check_preset,
    get_preset,
    preset_axes,
    preset_options,
)
from pywebbench.jobs.execute import points_of, preset_variants
from pywebbench.plan.knobs import knob_args
from pywebbench.plan.sessions import make_plan
from pywebbench.plan.sweep import Knob

def _seeds() -> Path:
    """The seed texts beside the repository (../shared/seeds), or where PYWEBBENCH_SEEDS says.

    A clone elsewhere (a CI checkout in /tmp) falls back to the team machines' shared folder.
    """
    repo = Path(__file__).resolve().parents[2]
    candidates = [os.environ.get("PYWEBBENCH_SEEDS"), repo.parent / "shared" / "seeds", "/work/shared/seeds"]
    return next((Path(c) for c in candidates if c and Path(c).is_dir()), repo.parent / "shared" / "seeds")


SEEDS = _seeds()
needs_seeds = pytest.mark.skipif(not SEEDS.is_dir(), reason=f"seed documents not found at {SEEDS} "
                                 "(set PYWEBBENCH_SEEDS)")


def planned_trials(preset: Preset, catalog: Catalog) -> int:
    """Trials the planner itself makes of a preset run on a 2-CPU machine (as `run --preset` does)."""
    options = check_preset(preset, catalog)
    plan = make_plan(catalog, options, (0, 1), points_of(knob_args(preset.grid)),
                     extra=preset_variants(catalog, preset.name))
    return len(plan.trials)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog()


def _with_options(preset: Preset, **changes: OptionValue) -> Preset:
    return replace(preset, options=MappingProxyType({**preset.options, **changes}))


def _seed_text(prefix: str) -> str:
    return next(SEEDS.glob(f"{prefix}_*.txt")).read_text()


# --- every preset is runnable here ----------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_stacks_resolve_and_are_available(name: str, catalog: Catalog) -> None:
    preset = PRESETS[name]
    assert preset.stacks
    for stack_id in preset.stacks + tuple(v.stack for v in preset.variants):
        stack = catalog.resolve(stack_id)
        assert stack.id == stack_id, f"{stack_id} resolves to {stack.id}: name it exactly"
        assert stack.unavailable is None, f"{stack_id}: {stack.unavailable}"


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_options_validate_through_from_sources(name: str, catalog: Catalog) -> None:
    preset = PRESETS[name]
    options = from_sources(config_file=None, environ={}, flags=preset_options(preset))
    assert options.stacks == preset.stacks
    assert options.workloads == preset.workloads
    assert options.aggregation == preset.aggregation
    assert check_preset(preset, catalog) == options


@pytest.mark.parametrize(("change", "message"), [
    ({"connections": 0}, "must be positive"),
    ({"conections": 5}, "unknown option"),
    ({"generator": "siege"}, "--generator must be one of"),
    ({"topology": "haproxy"}, "--topology must be one of"),
    ({"driver": "sqlite"}, "--driver must be one of"),
    ({"stacks": ("flask:nonesuch",)}, "unknown server"),
    ({"stacks": ("starlette:gunicorn-sync",)}, "not a valid pairing"),
    ({"workloads": ("graphql",)}, "unknown workload"),
    ({"aggregation": "best"}, "Preset.aggregation"),
])
def test_a_bad_value_fails(change: dict[str, OptionValue], message: str, catalog: Catalog) -> None:
    bad = _with_options(get_preset("seed001-sync-client"), **change)
    with pytest.raises(UserError, match=message):
        check_preset(bad, catalog)


# --- grids ----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_grids_use_known_knobs_only(name: str) -> None:
    preset = PRESETS[name]
    known = {k.value for k in Knob}
    assert {knob for knob, _ in preset.grid} <= known
    axes = preset_axes(preset)
    assert [(a.knob.value, a.values) for a in axes] == [(k, tuple(v)) for k, v in preset.grid]


def test_unknown_or_bad_grid_knob_is_refused() -> None:
    seed004 = get_preset("seed004")
    with pytest.raises(UserError, match="unknown knob 'workers_per_cpu'"):
        preset_axes(replace(seed004, grid=(("workers_per_cpu", (3,)),)))
    with pytest.raises(UserError, match="threads must be positive"):
        preset_axes(replace(seed004, grid=(("threads", (0, 10)),)))


def test_seed002_sweeps_threads_on_the_threaded_worker_only(catalog: Catalog) -> None:
    seed002 = get_preset("seed002")
    assert seed002.grid == (("threads", (10, 20, 50, 100, 200, 400, 800, 1000)),)
    assert seed002.options["connections"] == 400 and seed002.options["workers"] == 2
    threaded = [s for s in seed002.stacks if catalog.resolve(s).server.threaded]
    assert threaded == ["flask:gunicorn-gthread"]
    assert planned_trials(seed002, catalog) == 3 + 8  # aiohttp, gevent, meinheld once; gthread x 8


def test_seed004_is_one_and_two_cpus_with_three_workers_per_cpu(catalog: Catalog) -> None:
    seed004 = get_preset("seed004")
    assert seed004.grid == (("stack_cpus", (1, 2)),)
    assert seed004.workers_per_cpu == 3 and "workers" not in seed004.options
    assert seed004.aggregation == "mean" and seed004.options["repeats"] == 10
    assert dict(seed004.workload_requests) == {"api": 1000} and seed004.options["requests"] == 10_000
    # 7 Python stacks x (template, api) + nginx x static, on 2 CPU settings, 10 runs
    assert planned_trials(seed004, catalog) == (7 * 2 + 1) * 2 * 10
    with pytest.raises(UserError, match="workers_per_cpu"):
        check_preset(_with_options(seed004, workers=3), catalog)


def test_seed000_columns_carry_the_seeds_knobs() -> None:
    expected = {  # connections, max DB sessions, delay, app-side pool
        "seed000": (100, 100, 0.02, 0),
        "seed000-better-async": (400, 100, 0.04, 0),
        "seed000-better-sync": (3, 3, 0.01, 0),  # 19 clients = 19 sessions = 19 sync workers, scaled to 3
        "seed000-original": (100, 100, 0.0, 4),
    }
    for name, knobs in expected.items():
        options = from_sources(config_file=None, environ={}, flags=preset_options(get_preset(name)))
        assert (options.connections, options.max_db_sessions, options.db_delay_s, options.db_pool) == knobs
        assert options.topology == "nginx" and options.workloads == ("db",) and options.workers is None
        assert len(options.stacks) == 22 and "go:net-http" in options.stacks


def test_seed003_is_best_of_five(catalog: Catalog) -> None:
    seed003 = get_preset("seed003")
    assert seed003.aggregation == "best" and seed003.options["repeats"] == 5
    assert len(seed003.stacks) == 26
    assert planned_trials(seed003, catalog) == 26 * 2 * 5


def test_seed001_variant_adds_the_sync_client_trial(catalog: Catalog) -> None:
    seed001 = get_preset("seed001")
    (variant,) = seed001.variants
    assert (variant.stack, variant.driver, variant.workloads) == ("starlette:gunicorn-uvicorn", "psycopg", ("posts",))
    assert planned_trials(seed001, catalog) == 3 * 3 + 1
    standalone = check_preset(get_preset("seed001-sync-client"), catalog)
    assert standalone.driver == "psycopg" and standalone.stacks == ("starlette:gunicorn-uvicorn",)


# --- names ----------------------------------------------------------------------------------

def test_unknown_preset_is_a_one_line_error_naming_the_known_ones() -> None:
    with pytest.raises(UserError) as caught:
        get_preset("seed999")
    message = str(caught.value)
    assert "\n" not in message and "'seed999'" in message
    assert all(name in message for name in PRESETS)


def test_get_preset_returns_the_registered_one() -> None:
    assert get_preset("seed003") is PRESETS["seed003"]
    assert all(preset.name == name for name, preset in PRESETS.items())


# --- published figures ----------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(PRESETS))
def test_published_figures_are_present(name: str) -> None:
    preset = PRESETS[name]
    assert preset.published_from
    if name == "seed000-original":
        assert not preset.published and preset.published_from.startswith("none:")
        return
    assert preset.published
    assert all(f.metric in METRICS and f.value > 0 for f in preset.published)


def test_a_figure_outside_the_preset_is_refused(catalog: Catalog) -> None:
    seed002 = get_preset("seed002")
    for stray in (
        Figure("flask:gunicorn-sync", "rps", 1.0, "upstream"),
        Figure("aiohttp:gunicorn-aiohttp", "rps", 1.0, "hello"),
        Figure("aiohttp:gunicorn-aiohttp", "speed", 1.0, "upstream"),
        Figure("flask:gunicorn-gthread", "rps", 1.0, "upstream", (("threads", 30),)),
    ):
        with pytest.raises(UserError, match="published"):
            check_preset(replace(seed002, published=(*seed002.published, stray)), catalog)
    with pytest.raises(UserError, match="no published figures"):
        check_preset(replace(seed002, published=()), catalog)


def _figures(name: str) -> dict[tuple[str, str, str, tuple[tuple[str, int | float], ...]], float]:
    return {(f.stack, f.workload, f.metric, f.where): f.value for f in get_preset(name).published}


def test_seed000_tput_equals_my_results_column() -> None:
    """The seed prints the same ratios twice (first table, last table): the copies must agree."""
    first = _figures("seed000")
    ratios = {key[0]: value for key, value in first.items() if key[2] == "ratio"}
    assert len(ratios) == 21 and ratios["flask:gunicorn-sync"] == 1.00
    for name in ("seed000-better-async", "seed000-better-sync"):
        assert {key[0] for key in _figures(name)} == set(ratios)


_SEED000_NAMES = {
    ("Bottle", "Meinheld"): "bottle:gunicorn-meinheld", ("Falcon", "Meinheld"): "falcon:gunicorn-meinheld",
    ("Sanic", "Sanic"): "sanic:sanic", ("Flask", "Meinheld"): "flask:gunicorn-meinheld",
    ("Starlette", "Uvicorn"): "starlette:uvicorn", ("Bottle", "Gevent"): "bottle:gunicorn-gevent",
    ("Aiohttp", "Aiohttp"): "aiohttp:gunicorn-aiohttp", ("Flask", "Gevent"): "flask:gunicorn-gevent",
    ("Sanic", "Uvicorn"): "sanic:uvicorn", ("Tornado", "Tornado"): "tornado:tornado",
    ("Falcon", "Gevent"): "falcon:gunicorn-gevent", ("FastAPI", "Uvicorn"): "fastapi:uvicorn",
    ("Aioflask", "Uvicorn"): "aioflask:uvicorn", ("Falcon", "uWSGI"): "falcon:uwsgi",
    ("Quart", "Uvicorn"): "quart:uvicorn", ("Bottle", "uWSGI"): "bottle:uwsgi",
    ("Bottle", "Gunicorn"): "bottle:gunicorn-sync", ("Flask", "Gunicorn"): "flask:gunicorn-sync",
    ("Flask", "uWSGI"): "flask:uwsgi", ("Falcon", "Gunicorn"): "falcon:gunicorn-sync",
    ("Quart", "Hypercorn"): "quart:hypercorn-uvloop",
}
_TYPE = r"(?:Async / \w+|Sync)"


@needs_seeds
def test_seed000_figures_match_the_seed_text() -> None:
    text = _seed_text("000")
    first = re.findall(rf"^(\w+) (\w+) {_TYPE} (\d+) ([\d.]+) (\d+) (\d+) (\d+)$", text, re.M)
    last = re.findall(rf"^(\w+) (\w+) {_TYPE} ([\d.]+) ([\d.]+) ([\d.]+)$", text, re.M)
    assert len(first) == len(last) == 21
    mine = _figures("seed000")
    for fw, server, workers, ratio, p50, p99, sessions in first:
        stack = _SEED000_NAMES[(fw, server)]
        for metric, value in (("workers", workers), ("ratio", ratio), ("p50_ms", p50), ("p99_ms", p99),
                              ("db_sessions", sessions)):
            assert mine[(stack, "db", metric, ())] == float(value), (stack, metric)
    better_async, better_sync = _figures("seed000-better-async"), _figures("seed000-better-sync")
    for fw, server, my, fast_async, fast_sync in last:
        stack = _SEED000_NAMES[(fw, server)]
        assert mine[(stack, "db", "ratio", ())] == float(my)
        assert better_async[(stack, "db", "ratio", ())] == float(fast_async)
        assert better_sync[(stack, "db", "ratio", ())] == float(fast_sync)


@needs_seeds
def test_seed001_figures_match_the_seed_text() -> None:
    text = _seed_text("001")
    rows = re.findall(r"^(Flask|Starlette(?: \((?:async|sync)\))?|Golang) (\d+) (\d+)ms (\d+)ms (\d+)ms$",
                      text, re.M)
    names = {"Flask": "flask:gunicorn-gthread", "Starlette": "starlette:gunicorn-uvicorn",
             "Starlette (async)": "starlette:gunicorn-uvicorn",
             "Starlette (sync)": "starlette:gunicorn-uvicorn#sync-client", "Golang": "go:net-http"}
    workloads = ["hello"] * 3 + ["upstream"] * 3 + ["posts"] * 4
    assert len(rows) == len(workloads) == 10
    mine = _figures("seed001")
    assert len(mine) == 10 * 4
    for (name, rps, p50, p80, p90), workload in zip(rows, workloads, strict=True):
        for metric, value in (("rps", rps), ("p50_ms", p50), ("p80_ms", p80), ("p90_ms", p90)):
            assert mine[(names[name], workload, metric, ())] == float(value), (name, workload, metric)
    standalone = _figures("seed001-sync-client")
    assert standalone[("starlette:gunicorn-uvicorn", "posts", "rps", ())] == 1388


@needs_seeds
def test_seed002_figures_match_the_seed_text() -> None:
    rows = re.findall(r"^(aiohttp|flask:\w+)((?: [\d.]+){8})$", _seed_text("002"), re.M)
    assert len(rows) == 11
    mine = _figures("seed002")
    assert len(mine) == 11 * 8
    metrics = ("min_ms", "p50_ms", "p99_ms", "p999_ms", "max_ms", "mean_ms", "duration_s", "requests")
    for variant, numbers in rows:
        suffix = variant.partition(":")[2]
        where: tuple[tuple[str, int], ...] = ()
        if variant == "aiohttp":
            stack = "aiohttp:gunicorn-aiohttp"
        elif suffix.isdigit():
            stack, where = "flask:gunicorn-gthread", (("threads", int(suffix)),)
        else:
            stack = f"flask:gunicorn-{suffix}"
        for metric, value in zip(metrics, numbers.split(), strict=True):
            assert mine[(stack, "upstream", metric, where)] == float(value), (variant, metric)


@needs_seeds
def test_seed003_hello_figures_match_the_seed_text() -> None:
    text = _seed_text("003")
    mine = _figures("seed003")
    servers = {"eventlet": "gunicorn-eventlet", "gevent": "gunicorn-gevent", "gunicorn": "gunicorn-sync",
               "meinheld": "gunicorn-meinheld"}
    for row, server in servers.items():
        match = re.search(rf"^{row}((?:\s+[\d.]+k){{5}})\s+n/a$", text, re.M)
        assert match is not None, row
        for fw, value in zip(("apistar", "bottle", "falcon", "flask", "hug"), match.group(1).split(), strict=True):
            assert mine[(f"{fw}:{server}", "hello", "rps", ())] == pytest.approx(float(value[:-1]) * 1000)
    assert mine[("sanic:sanic", "hello", "rps", ())] == 68_020
    assert re.search(r"^uwsgi(\s+errors){5}", text, re.M)  # why uWSGI has no published number
    assert mine[("sanic:sanic", "cpu", "requests_per_10s_min", ())] == 385
    assert mine[("falcon:gunicorn-meinheld", "cpu", "requests_per_10s_max", ())] == 498
    assert "385 - 495" in text and "461 - 498" in text


@needs_seeds
def test_seed004_figures_are_quoted_from_the_seed_text() -> None:
    text = " ".join(_seed_text("004").split())
    for figure in get_preset("seed004").published:
        quoted = figure.note.strip("'")
        assert quoted in text, quoted
