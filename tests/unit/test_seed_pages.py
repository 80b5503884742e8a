"""The seed pages: orders with their noise, Kendall's tau and the swaps of seed 000's lesson,
a page per seed from synthetic runs, and the pages' staleness check."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.agreement import (
    Order,
    Verdict,
    check_claim,
    kendall_tau_b,
    lesson,
    published_order,
    round_ratios,
    verdict,
)
from pywebbench.analyze.rows import summarize
from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.presets import PRESETS, Claim, check_preset
from pywebbench.plan.presets.seed000 import _SEED000_COLUMNS
from pywebbench.report.pages import PAGES, build, stale
from pywebbench.report.pages.seeds import SEEDS, render_index, seed000, seed001, seed002, seed003, seed004
from pywebbench.results.store import load_results
from support.seed_runs import Point, write_run

BASE = "flask:gunicorn-sync"


# --- Kendall's tau-b and the seed's own columns ----------------------------------------------------


@pytest.mark.parametrize(("xs", "ys", "tau"), [
    ([1, 2, 3, 4], [10, 20, 30, 40], 1.0),
    ([1, 2, 3, 4], [4, 3, 2, 1], -1.0),
    ([1, 2, 3, 4], [1, 2, 4, 3], 4 / 6),  # one discordant pair of six
    ([1, 1, 2], [1, 2, 3], 2 / (2 * 3) ** 0.5),  # tau-b: a tie on one side shrinks the denominator
])
def test_kendall_tau_b_on_known_inputs(xs: list[float], ys: list[float], tau: float) -> None:
    assert kendall_tau_b(xs, ys) == pytest.approx(tau)


def test_kendall_tau_b_is_undefined_when_one_side_is_all_ties_or_too_short() -> None:
    assert kendall_tau_b([1, 1, 1], [1, 2, 3]) is None
    assert kendall_tau_b([1], [2]) is None
    with pytest.raises(ValueError):
        kendall_tau_b([1, 2], [1, 2, 3])


def test_the_seeds_own_better_async_and_better_sync_columns_give_minus_0_04() -> None:
    """The figure the issue quotes for seed 000's own two columns."""
    tau = kendall_tau_b([r[2] for r in _SEED000_COLUMNS], [r[3] for r in _SEED000_COLUMNS])
    assert tau == pytest.approx(-0.0388, abs=5e-4)


# --- orders and verdicts ------------------------------------------------------------------------------


@pytest.mark.parametrize(("seed", "ours", "expected"), [
    (Order.ABOVE, Order.ABOVE, Verdict.AGREES),
    (Order.ABOVE, Order.TIED, Verdict.TIED),
    (Order.ABOVE, Order.BELOW, Verdict.DIFFERS),
    (Order.BELOW, Order.BELOW, Verdict.AGREES),
    (Order.TIED, Order.TIED, Verdict.AGREES),  # the seed said 'level', and so does the noise here
    (Order.TIED, Order.ABOVE, Verdict.DIFFERS),
    (Order.ABOVE, Order.UNRESOLVED, Verdict.UNRESOLVED),
])
def test_verdict_reads_the_seeds_order_against_ours(seed: Order, ours: Order, expected: Verdict) -> None:
    assert verdict(seed, ours) is expected


def test_a_published_ratio_states_an_order_and_two_decimals_of_one_state_level() -> None:
    assert published_order(1.07) is Order.ABOVE
    assert published_order(0.94) is Order.BELOW
    assert published_order(1.00) is Order.TIED
    assert published_order(1.004) is Order.TIED


# --- seed 000's lesson on known inputs -------------------------------------------------------------

# Under "async", A leads B and C clearly and B leads C by 4%; under "sync", B and C lead A clearly
# and C leads B by 4%. With 5% noise per window, A's swaps are outside the noise, B/C's inside it.
ASYNC_RPS = {BASE: 1000.0, "a:one": 2500.0, "b:two": 1500.0, "c:three": 1440.0}
SYNC_RPS = {BASE: 1000.0, "a:one": 1100.0, "b:two": 1300.0, "c:three": 1360.0}


def _lesson_runs(results: Path) -> tuple[list[object], ...]:
    write_run(results, "async", [Point(s, "db", rps) for s, rps in ASYNC_RPS.items()], rounds=9, noise=0.05)
    write_run(results, "sync", [Point(s, "db", rps) for s, rps in SYNC_RPS.items()], rounds=9, noise=0.05, seed=7)
    return tuple([load_results(results / "seeds" / name)] for name in ("async", "sync"))


def test_a_swap_is_outside_the_noise_only_when_both_rows_separate_in_both_columns(tmp_path: Path) -> None:
    _lesson_runs(tmp_path)
    runs = [load_results(tmp_path / "seeds" / name) for name in ("async", "sync")]
    rows = [summarize(run, baseline=BASE).rows for run in runs]
    ratios = [round_ratios(run, found, BASE) for run, found in zip(runs, rows)]
    found = lesson(rows[0], rows[1], tuple(ASYNC_RPS), BASE, ratios[0], ratios[1], resamples=400)
    swaps = {(f.ahead, f.behind): f.within_noise for f in found.comparison.flips}
    # a:one falls from first to third: it swaps with both b and c, clearly; b and c swap within the noise.
    assert swaps == {("a:one", "b:two"): False, ("a:one", "c:three"): False, ("b:two", "c:three"): True}
    assert [(f.ahead, f.behind) for f in found.clear_flips] == [("a:one", "b:two"), ("a:one", "c:three")]
    assert found.verdict is Verdict.AGREES
    # Four stacks: async a > b > c > base, sync c > b > a > base: 3 of 6 pairs discordant, tau 0.
    assert found.tau == pytest.approx(0.0)
    assert found.interval is not None
    assert -1.0 <= found.interval.low <= found.tau <= found.interval.high <= 1.0
    assert found.interval.resamples == 400
    assert [r.stack for r in found.first] == ["a:one", "b:two", "c:three", BASE]
    assert [r.stack for r in found.second] == ["c:three", "b:two", "a:one", BASE]


def test_with_only_swaps_inside_the_noise_the_lesson_is_tied_and_with_none_it_differs(tmp_path: Path) -> None:
    near = {BASE: 1000.0, "b:two": 1500.0, "c:three": 1440.0}
    noisy = {"rounds": 6, "noise": 0.05}
    write_run(tmp_path, "one", [Point(s, "db", v) for s, v in near.items()], **noisy)
    write_run(tmp_path, "two", [Point(s, "db", v) for s, v in {**near, "c:three": 1560.0}.items()], seed=5, **noisy)
    write_run(tmp_path, "three", [Point(s, "db", v) for s, v in near.items()], seed=4, **noisy)
    runs = {n: load_results(tmp_path / "seeds" / n) for n in ("one", "two", "three")}
    rows = {n: summarize(r, baseline=BASE).rows for n, r in runs.items()}
    tied = lesson(rows["one"], rows["two"], tuple(near), BASE)
    assert tied.comparison.swaps == 1 and not tied.clear_flips
    assert tied.verdict is Verdict.TIED and tied.interval is None  # no round ratios given: no interval
    same = lesson(rows["one"], rows["three"], tuple(near), BASE)
    assert same.comparison.swaps == 0 and same.verdict is Verdict.DIFFERS


def test_one_window_per_stack_gives_a_tau_but_no_interval_and_no_swap_outside_the_noise(tmp_path: Path) -> None:
    write_run(tmp_path, "x", [Point(s, "db", v) for s, v in ASYNC_RPS.items()], rounds=1)
    write_run(tmp_path, "y", [Point(s, "db", v) for s, v in SYNC_RPS.items()], rounds=1)
    runs = [load_results(tmp_path / "seeds" / n) for n in ("x", "y")]
    rows = [summarize(run, baseline=BASE).rows for run in runs]
    ratios = [round_ratios(run, found, BASE) for run, found in zip(runs, rows)]
    found = lesson(rows[0], rows[1], tuple(ASYNC_RPS), BASE, ratios[0], ratios[1])
    assert found.tau is not None and found.interval is None
    assert found.comparison.swaps == 3 and found.comparison.clear_flips  # points alone look separate...
    assert not found.clear_flips and found.verdict is Verdict.TIED  # ...but without an interval nothing is


def test_a_claim_is_checked_pair_by_pair_with_the_pairs_own_ratio(tmp_path: Path) -> None:
    rps = {BASE: 1000.0, "a:one": 2000.0, "b:two": 1500.0, "c:three": 1495.0}
    write_run(tmp_path, "c", [Point(s, "db", v) for s, v in rps.items()], rounds=6)
    run = load_results(tmp_path / "seeds" / "c")
    summary = summarize(run, baseline=BASE)
    rows, priors = summary.rows, summary.priors
    above = check_claim(run, rows, Claim(("a:one",), ("b:two", "c:three"), "db", "a leads"), priors)
    assert above.verdict is Verdict.AGREES and above.count(Verdict.AGREES) == 2
    near = check_claim(run, rows, Claim(("b:two",), ("c:three",), "db", "b leads c"), priors)
    assert near.verdict is Verdict.TIED
    assert near.pairs[0].estimate is not None and near.pairs[0].estimate.paired
    level = check_claim(run, rows, Claim(("b:two",), ("c:three",), "db", "comparable", level=True), priors)
    assert level.verdict is Verdict.AGREES
    wrong = check_claim(run, rows, Claim(("c:three", "a:one"), ("b:two",), "db", "c and a lead b"), priors)
    assert wrong.verdict is Verdict.TIED  # c/b is tied, a/b agrees: none differs
    reverse = check_claim(run, rows, Claim((BASE,), ("a:one",), "db", "the baseline leads"), priors)
    assert reverse.verdict is Verdict.DIFFERS
    missing = check_claim(run, rows, Claim(("z:none",), ("a:one",), "db", "not run"), priors)
    assert missing.verdict is Verdict.NOT_MEASURED


def test_a_claim_naming_a_stack_or_point_outside_its_preset_is_refused() -> None:
    """Every preset's own claims pass (tests/unit/test_presets.py checks each preset); these do not."""
    catalog = build_catalog()
    preset = PRESETS["seed004"]
    for claim, message in (
        (Claim(("flask:gunicorn-sync",), ("django:uwsgi",), "template", "q"), "names no stack"),
        (Claim(("flask:gunicorn-sync",), ("flask:uwsgi",), "graphql", "q"), "names no stack/workload"),
        (Claim(("flask:gunicorn-sync",), ("flask:uwsgi",), "api", "q", (("stack_cpus", 3),)), "no grid point"),
    ):
        with pytest.raises(UserError, match=message):
            check_preset(replace(preset, claims=(claim,)), catalog)


# --- the pages ------------------------------------------------------------------------------------


def _seed000_runs(results: Path) -> None:
    write_run(results, "seed000-better-async",
              [Point(s, "db", 1000 * a, cpu_ms=0.3) for s, _m, a, _b in _SEED000_COLUMNS]
              + [Point("go:net-http", "db", 9000, cpu_ms=0.05)])
    write_run(results, "seed000-better-sync", [Point(s, "db", 1000 * b) for s, _m, _a, b in _SEED000_COLUMNS],
              seed=2)


def test_seed000_page_sets_the_seeds_columns_beside_ours_and_shows_the_lesson(tmp_path: Path) -> None:
    _seed000_runs(tmp_path)
    text = seed000.render(tmp_path)
    assert "## The lesson: Better Async against Better Sync" in text
    assert "the seed's own two columns: -0.04" in text
    assert "Kendall's tau-b between the two rankings of the seed's 21 stacks" in text
    assert "outside the noise" in text and "<details><summary>Every pair that swaps places" in text
    # Measured columns beside the seed's, with a sentence per stack.
    assert ("- agrees: both rank `bottle:gunicorn-meinheld` above `flask:gunicorn-sync`, ours outside the noise "
            "(seed 5.56; ours 5.59 [") in text
    assert "| `go:net-http` | - |" in text  # our reference, no seed figure
    assert "### What the seed could not see: CPU per request" in text
    assert "| `flask:gunicorn-sync` | db | 0.500 | 1 (the baseline) |" in text
    # The two columns not measured say so, with the command, and show no figure of ours.
    mine = text[text.index("## Seed 000, 'My Benchmark'"):text.index("## Seed 000, 'Original'")]
    assert "**Not yet measured here.** `scripts/seed-runs seed000`" in mine
    assert "Our req/s" not in mine and "| `bottle:gunicorn-meinheld` | 1.38 |" in mine
    assert "- *The async solutions (with the exception of the Hypercorn server" in mine


def test_seed000_page_before_any_run_has_no_figure_of_ours(tmp_path: Path) -> None:
    text = seed000.render(tmp_path)
    assert "Our req/s" not in text and "Run `" not in text
    assert text.count("**Not yet measured here.**") == 5  # the lesson and four columns
    assert "`scripts/seed-runs seed000-better-async` and `scripts/seed-runs seed000-better-sync`" in text


def test_seed001_page_measures_against_flask_on_threads_and_checks_the_sync_client(tmp_path: Path) -> None:
    flask, starlette = "flask:gunicorn-gthread", "starlette:gunicorn-uvicorn"
    write_run(tmp_path, "seed001", [
        Point(flask, "hello", 1000), Point(starlette, "hello", 4000), Point("go:net-http", "hello", 9000),
        Point(flask, "posts", 700), Point(starlette, "posts", 702), Point(f"{starlette}#sync-client", "posts", 1400),
    ], baseline=flask)
    text = seed001.render(tmp_path)
    assert "Ratios are to `flask:gunicorn-gthread`" in text
    # 5789 / 960 = 6.03: the seed's ratio made from its own req/s.
    assert "| `starlette:gunicorn-uvicorn` | 5,789 | 6.03 | 3,893 | 3.97 [3.93, 4.00] | 2 | 0 | agrees |" in text
    assert "agrees: both rank `starlette:gunicorn-uvicorn` above `flask:gunicorn-gthread`" in text
    assert "tied here: the seed puts `starlette:gunicorn-uvicorn` above `flask:gunicorn-gthread` (1.03)" in text
    said = text[text.index("### What the seed said"):]
    assert "perform comparably.* (posts)\n  - agrees: `starlette:gunicorn-uvicorn` against `flask:gunicorn-gthread`" in said
    assert "improved Starlette performance by nearly 2x" in said and "(the seed: above)" in said
    assert "**Not yet measured here.** `scripts/seed-runs seed001-postgresql`" in text


def test_seed002_page_compares_thread_counts_with_aiohttp_unpaired(tmp_path: Path) -> None:
    aiohttp = "aiohttp:gunicorn-aiohttp"
    write_run(tmp_path, "seed002", [
        Point(aiohttp, "upstream", 1500), Point("flask:gunicorn-gevent", "upstream", 400),
        Point("flask:gunicorn-meinheld", "upstream", 20),
        *(Point("flask:gunicorn-gthread", "upstream", rps, threads=t) for t, rps in ((10, 90), (20, 170), (50, 230),
                                                                                    (100, 450))),
    ], baseline=aiohttp)
    text = seed002.render(tmp_path)
    # The seed's requests in 20.05 s at 10 threads: 1797 / 20.05 = 90 req/s, 0.06 of aiohttp's 30702 / 20.10.
    assert "| `flask:gunicorn-gthread` | threads=10 | 90 | 0.06 |" in text
    assert "| `flask:gunicorn-gthread` | threads=800 | 218 | 0.14 | - | - | - | - | not measured |" in text
    assert "not measured: the seed puts `flask:gunicorn-gthread` (threads=800) below" in text
    said = text[text.index("### What the seed said"):]
    assert "But nothing handled nearly as many requests as aiohttp.* (upstream)\n  - agrees in all 6 pairs" in said
    # 450 req/s at 100 threads against gevent's 400, in another cell: unpaired, the drift makes it a tie.
    # The ratio printed is the geometric means' (0.89), the one its Welch interval is for.
    assert ("Gevent handled requests faster than any threading implementation.* (upstream)\n  - tied here: of 4 "
            "pairs, 3 agree, 1 tied here (`flask:gunicorn-gevent` against `flask:gunicorn-gthread` 0.89 [0.76, 1.04])"
            ) in said


def test_seed003_page_keeps_runs_with_errors_apart(tmp_path: Path) -> None:
    write_run(tmp_path, "seed003", [
        Point("flask:gunicorn-sync", "hello", 2000), Point("flask:gunicorn-meinheld", "hello", 6000),
        Point("falcon:gunicorn-meinheld", "hello", 12000), Point("falcon:gunicorn-sync", "hello", 2100),
        Point("flask:gunicorn-sync", "cpu", 45), Point("flask:gunicorn-gevent", "cpu", 40, errors=3),
    ])
    text = seed003.render(tmp_path)
    assert "| Stack | Seed req/s | Seed ratio | Seed's note | Our req/s |" in text
    gevent = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-gevent` | 47 |"))
    assert "with socket errors" in gevent and "| 18 |" in gevent  # 3 errors in each of 6 windows
    assert "unresolved: the seed puts `flask:gunicorn-gevent` above `flask:gunicorn-sync`" in text
    assert "Meinheld definitely stood out as the fastest WSGI server* (hello)\n  - agrees in all" in text


def test_seed004_page_reads_each_cpu_count_as_its_own_point(tmp_path: Path) -> None:
    write_run(tmp_path, "seed004", [
        *(Point(s, "template", v, stack_cpus=1) for s, v in (
            ("flask:gunicorn-sync", 300), ("flask:gunicorn-meinheld", 520), ("flask:gunicorn-gevent", 310),
            ("flask:gunicorn-eventlet", 290), ("flask:uwsgi", 330), ("flask:waitress", 200), ("flask:flask-dev", 90))),
        Point("nginx:static", "static", 1150, stack_cpus=1), Point("flask:gunicorn-sync", "static", 10, stack_cpus=1),
    ])
    text = seed004.render(tmp_path)
    assert "| `nginx:static` | stack_cpus=1 | 1,200 | - | " in text
    assert "| `nginx:static` | stack_cpus=2 | 2,800 | - | '2.8k responses per second' | - | - | - | - | - |" in text
    said = text[text.index("### What the seed said"):]
    assert "in this particular test.* (template, stack_cpus=1)\n  - agrees in all 6 pairs" in said
    assert "leading the pack.* (api, stack_cpus=2)\n  - not measured" in said


def test_the_seeds_table_says_what_is_measured_and_what_is_not(tmp_path: Path) -> None:
    _seed000_runs(tmp_path)
    text = render_index(tmp_path)
    lines = {line.split("]")[0]: line for line in text.splitlines() if line.startswith("| [")}
    assert set(lines) == {f"| [{n}" for n, *_ in SEEDS}
    assert "Kendall's tau" in lines["| [000"] and lines["| [000"].endswith("| agrees |")
    assert "not yet measured here: `scripts/seed-runs seed001`" in lines["| [001"]
    assert lines["| [001"].endswith("| - |")


# --- scripts/docs: every page, and which are stale ------------------------------------------------


def test_every_seed_has_a_page_and_the_seeds_table_is_one(tmp_path: Path) -> None:
    assert {"seeds.md", *(f"seed-{n}.md" for n, *_ in SEEDS)} <= set(PAGES)


def test_a_new_seed_run_makes_its_page_and_the_table_stale(tmp_path: Path) -> None:
    (tmp_path / "results").mkdir()
    for path, text in build(tmp_path).items():
        path.write_text(text)
    assert stale(tmp_path) == []
    write_run(tmp_path / "results", "seed003", [Point("flask:gunicorn-sync", "hello", 2000),
                                                Point("flask:gunicorn-meinheld", "hello", 6000)])
    # method.md re-derives the 2026-11-24 run kept apart (seeds/seed003-2026-11-24): a new run leaves it
    assert stale(tmp_path) == [tmp_path / "seeds.md", tmp_path / "seed-003.md"]


def test_a_torn_seed_results_file_is_named_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from pywebbench.report.pages.__main__ import main

    run_dir = tmp_path / "results" / "seeds" / "seed003"
    run_dir.mkdir(parents=True)
    (run_dir / "results.jsonl").write_text('{"record": "tria')
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("scripts/docs: ") and err.count("\n") == 1


def test_a_run_made_before_windows_waited_for_their_settle_says_how_low_its_long_queues_read() -> None:
    from pywebbench.report.pages.seeds.common import SETTLE_DRAINED_SINCE, settle_backlog_note
    results = load_results(Path(__file__).resolve().parents[2] / "docs" / "results" / "seeds" / "seed003-2026-11-24")
    note = settle_backlog_note(results)
    # 200 connections over 10 s windows: 20 req/s of a CPU-bound endpoint's ~30-50; hello's thousands lose 0.1-0.4%.
    assert note is not None and "on `cpu` by about" in note and "`hello`" not in note
    later = replace(results, header=replace(results.header, created_at=SETTLE_DRAINED_SINCE))
    assert settle_backlog_note(later) is None
