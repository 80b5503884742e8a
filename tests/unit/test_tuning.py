"""--tune: the candidate ladder and its refinement, stage decisions and ranking on fake
measurements, the SLO objective on a fake latency curve through the real search loop, the
deploy command, and the refusals before anything starts."""

from __future__ import annotations

import math
import random
from collections.abc import Callable

import pytest

from pywebbench import cli
from pywebbench.jobs import tune as tune_module
from pywebbench.analyze.paired import Observation
from pywebbench.analyze.ratesearch import Capacity, CapacitySearch
from pywebbench.analyze.tuning import Tuning, decide_capacity, decide_throughput, rank, unrepeated
from pywebbench.analyze.tuning_search import (
    ClassSearch,
    ClassSpace,
    Config,
    Figures,
    Stage,
    StageOutcome,
    bounds_for,
    ladder,
    refine_points,
)
from pywebbench.catalog.deploy import deploy_argv, deploy_command
from pywebbench.catalog.registry import build_catalog
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions
from pywebbench.plan.slo import Slo, parse_slo
from pywebbench.report.tuning import render_tuning, render_tuning_markdown
from pywebbench.results.model import Latency, LoadResult, SocketErrors, StackInfo, TrialResult, TrialSpec, TrialStatus

SYNC = ClassSpace("flask:gunicorn-sync", "Gunicorn", "sync", threaded=False, single_process=False)
GTHREAD = ClassSpace("flask:gunicorn-gthread", "Gunicorn", "gthread", threaded=True, single_process=False)
WAITRESS = ClassSpace("flask:waitress", "Waitress", "threads", threaded=True, single_process=True)
ROOMY = 64_000.0  # MiB: memory never binds unless a test says so


def test_the_ladder_is_geometric_and_ends_on_the_bound() -> None:
    assert ladder(1) == (1,)
    assert ladder(2) == (1, 2)
    assert ladder(3) == (1, 2, 3)
    assert ladder(5) == (1, 2, 5)  # 4 is within 1.5x of 5: one of them is enough
    assert ladder(9) == (1, 2, 4, 9)
    assert ladder(32) == (1, 2, 4, 8, 16, 32)
    with pytest.raises(ValueError):
        ladder(0)


def test_refinement_puts_midpoints_between_the_best_and_its_neighbours() -> None:
    assert refine_points((1, 2, 4, 9), 4, 9) == (3, 6)
    assert refine_points((1, 2, 4, 9), 9, 9) == (6,)
    assert refine_points((1, 2, 3), 2, 3) == ()  # adjacent: nothing between
    assert refine_points((1, 2, 4, 9, 3, 6), 6, 9) == (5, 7)
    assert refine_points((4, 9), 4, 5) == ()  # 6 is past the bound


def test_bounds_come_from_cpus_and_memory_and_are_stated() -> None:
    roomy = bounds_for(4, ROOMY, 8)
    assert roomy.max_workers == 9 and "2 x 4 stack CPU(s) + 1 = 9" in roomy.text
    tight = bounds_for(4, 2_000.0, 8, mb_per_process=50.0)  # 1000 MiB over 8 candidates: 125 each
    assert tight.max_workers == 1 and "memory allows 1" in tight.text


def _surface(best_workers: int, best_threads: int = 4) -> Callable[[Config], float]:
    """req/s peaking at a known (workers, threads), falling off in log distance."""
    def rps(config: Config) -> float:
        dw = math.log2(config.workers / best_workers)
        dt = math.log2(config.threads / best_threads) if config.threads > 1 or best_threads > 1 else 0.0
        return 1000.0 * math.exp(-0.3 * dw * dw - 0.1 * dt * dt)
    return rps


def _measure(stage: Stage, rps: Callable[[Config], float], rounds: int, rng: random.Random,
             first_round: int) -> StageOutcome:
    """Interleaved rounds faked: a drift shared by the round times each candidate's value and noise."""
    windows: dict[Config, list[Observation]] = {c: [] for c in stage.configs}
    for r in range(first_round, first_round + rounds):
        drift = rng.uniform(0.7, 1.3)
        for config in stage.configs:
            windows[config].append(Observation(1 + (r - 1) // 3, r, rps(config) * drift * rng.gauss(1.0, 0.01)))
    figures = {c: Figures(rounds, 0.5, 40.0 * (c.workers + 1)) for c in stage.configs}
    return decide_throughput(stage, windows, figures)


def _search(space: ClassSpace, cpus: int, rps: Callable[[Config], float],
            seed: int = 1) -> tuple[list[StageOutcome], ClassSearch]:
    rng = random.Random(seed)
    search = ClassSearch(space, bounds_for(cpus, ROOMY, 8))
    outcomes = []
    stage: Stage | None = search.first()
    round_no = 1
    while stage is not None:
        outcome = _measure(stage, rps, 8, rng, round_no)
        round_no += 8
        outcomes.append(outcome)
        stage = search.next(outcome)
    return outcomes, search


def _peak_among_the_best(outcomes: list[StageOutcome], peak: Config) -> None:
    """The true peak was measured, and it is the best or tied with it (neighbours of a smooth
    peak differ by less than the noise)."""
    ranked = rank(outcomes)
    assert ranked[0].tied
    assert peak in {r.config for r in ranked if r.tied}, [(r.config.alias, r.tied) for r in ranked]


def test_workers_ladder_then_refinement_finds_the_peak_without_a_full_grid() -> None:
    outcomes, search = _search(SYNC, 4, _surface(5))
    names = [o.stage.name for o in outcomes]
    assert names[:2] == ["workers", "refine 1"]
    assert [c.workers for c in outcomes[0].stage.configs] == [1, 2, 4, 9]
    # refinement around 4 (the ladder's best): 3 and 6, beside the incumbent
    assert outcomes[0].best == SYNC.config(4, 1)
    assert outcomes[1].stage.configs[0] == outcomes[0].best
    assert {c.workers for c in outcomes[1].stage.new} == {3, 6}
    _peak_among_the_best(outcomes, SYNC.config(5, 1))
    assert len(search.measured) < 9  # not every worker count from 1 to 9
    assert all(r.config.threads == 1 for r in rank(outcomes))


def test_threaded_classes_search_threads_at_the_best_worker_count() -> None:
    outcomes, search = _search(GTHREAD, 1, _surface(2, best_threads=8))
    assert outcomes[0].stage.name == "workers"
    assert {c.threads for c in outcomes[0].stage.configs} == {4}
    threads = outcomes[1]
    assert threads.stage.name == "threads"
    assert {c.workers for c in threads.stage.new} == {outcomes[0].best.workers if outcomes[0].best else 0}
    assert {c.threads for c in threads.stage.configs} == {1, 2, 4, 8, 16, 32}
    _peak_among_the_best(outcomes, GTHREAD.config(2, 8))
    # a full grid would be 3 x 32; the search measured a dozen or so
    assert len(search.measured) <= 16


def test_a_single_process_server_only_searches_threads() -> None:
    outcomes, _ = _search(WAITRESS, 4, _surface(1, best_threads=16))
    assert outcomes[0].stage.name == "threads"
    assert all(c.workers == 1 for o in outcomes for c in o.stage.configs)
    _peak_among_the_best(outcomes, WAITRESS.config(1, 16))


def test_ties_are_the_paired_interval_holding_one_and_they_are_carried() -> None:
    flat = {1: 500.0, 2: 1000.0, 3: 1003.0}  # 2 and 3 workers cannot be told apart; 1 is half
    rng = random.Random(3)
    search = ClassSearch(SYNC, bounds_for(1, ROOMY, 8))
    stage = search.first()
    outcome = _measure(stage, lambda c: flat[c.workers], 9, rng, 1)  # three launches: two ratios lend nothing
    assert outcome.best is not None and outcome.best.workers in (2, 3)
    tied = {m.config.workers for m in outcome.rows if m.tied}
    assert tied == {2, 3}
    one = next(m for m in outcome.rows if m.config.workers == 1)
    assert one.vs_best is not None and one.vs_best.high < 0.6
    assert search.next(outcome) is None  # 1, 2, 3: nothing between to refine
    ranked = rank([outcome])
    assert [r.tied for r in ranked] == [True, True, False]
    assert ranked[1].vs_best is not None and ranked[1].vs_best.low <= 1.0 <= ranked[1].vs_best.high


def _capacity_ladder(capacities: dict[int, Capacity], cut: set[int] = frozenset()) -> tuple[ClassSearch, StageOutcome]:
    """A sync class on 4 CPUs whose workers ladder measured `capacities` (workers: capacity);
    the searches of `cut` were stopped by the budget."""
    search = ClassSearch(SYNC, bounds_for(4, ROOMY, 8))
    stage = search.first()
    figures = {c: Figures(5, cut_short="search stopped (budget)" if c.workers in cut else None)
               for c in stage.configs}
    return search, decide_capacity(stage, {c: capacities[c.workers] for c in stage.configs}, figures)


def test_no_refinement_around_an_incumbent_whose_own_search_was_cut_short() -> None:
    resolved = {w: Capacity(100.0 * w, 105.0 * w, (), "resolved") for w in (1, 2, 4, 9)}
    search, outcome = _capacity_ladder(resolved)
    assert search.next(outcome) is not None  # resolved: midpoints around the best are worth a stage
    cut = {**resolved, 9: Capacity(900.0, None, (), "budget")}
    search, outcome = _capacity_ladder(cut, cut={9})
    assert outcome.best is not None and outcome.best.workers == 9
    assert search.next(outcome) is None  # the budget could not resolve 9 workers: no stage splits it further


def test_a_stage_carries_at_most_two_ties_the_best_measured_first() -> None:
    open_ended = {w: Capacity(100.0 + w, None, (), "budget") for w in (1, 2, 4, 9)}  # every bracket open: all tied
    resolved_best = {**open_ended, 4: Capacity(200.0, 210.0, (), "resolved")}
    search, outcome = _capacity_ladder(resolved_best, cut={1, 2, 9})
    assert {m.config.workers for m in outcome.rows if m.tied} == {1, 2, 4, 9}
    refine = search.next(outcome)
    assert refine is not None
    carried = [c.workers for c in refine.configs if c not in refine.new]
    assert carried == [4, 9, 2]  # the incumbent, then the two ties measured highest


def test_ties_whose_own_search_was_cut_are_said_apart_from_the_deploy_lines() -> None:
    open_ended = {w: Capacity(100.0 + w, None, (), "budget") for w in (1, 2, 4, 9)}
    _, outcome = _capacity_ladder({**open_ended, 4: Capacity(200.0, 210.0, (), "resolved")}, cut={1, 2, 9})
    ranked = rank([outcome])
    assert ranked[0].config.workers == 4 and all(r.tied for r in ranked)
    tuning = Tuning("p99<100ms", "hello", (), ranked, (), deploy=(("flask:gunicorn-sync#w4t1", "gunicorn -w 4"),))
    text = render_tuning_markdown(tuning)
    assert "not offered to deploy: 3 tied configuration(s) whose own measuring was cut short" in text
    assert "Deploy the best:" in text


def test_a_candidate_out_of_an_early_stage_is_ranked_through_the_incumbent() -> None:
    outcomes, _ = _search(SYNC, 4, _surface(5))
    ranked = rank(outcomes)
    one = next(r for r in ranked if r.config.workers == 1)
    assert not one.beside_best and one.to_best is not None and one.to_best < 0.8 and not one.tied
    assert [r.rank for r in ranked] == list(range(1, len(ranked) + 1))


def _curve(capacity: float) -> Callable[[float], float]:
    """Corrected p99 of a server that keeps up below `capacity` and queues past it."""
    return lambda rate: 8.0 if rate <= capacity else 8.0 + (rate - capacity) * 2.0


def test_the_slo_objective_searches_each_candidate_in_interleaved_rounds() -> None:
    slo = parse_slo("p99<100ms")
    capacity = {1: 400.0, 2: 760.0, 3: 780.0}
    search = ClassSearch(SYNC, bounds_for(1, ROOMY, 8))
    stage = search.first()
    searches = {c: CapacitySearch(slo, start=100, max_rate=100_000, resolution=0.05, max_probes=12)
                for c in stage.configs}
    rounds = 0
    while any(s.next_rate is not None for s in searches.values()):
        rounds += 1
        for config, s in searches.items():  # one probe per candidate per round, as the engine does
            if (rate := s.next_rate) is not None:
                s.record(_curve(capacity[config.workers])(rate))
    results = {c: s.result() for c, s in searches.items()}
    assert all(r.stopped == "resolved" for r in results.values())
    assert rounds == max(len(r.probes) for r in results.values())
    outcome = decide_capacity(stage, results, {c: Figures(len(r.probes)) for c, r in results.items()})
    by_workers = {m.config.workers: m for m in outcome.rows}
    held_at = {w: capacity[w] + (100 - 8) / 2.0 for w in capacity}  # p99 reaches 100 ms here
    for workers, m in by_workers.items():
        assert m.value is not None and m.interval is not None
        assert m.interval[0] <= held_at[workers] < m.interval[1]
    # 2 and 3 workers: brackets overlap, tied; 1 worker is half their capacity
    assert outcome.best is not None and outcome.best.workers in (2, 3)
    assert by_workers[2].tied and by_workers[3].tied and not by_workers[1].tied
    ranked = rank([outcome])
    assert ranked[0].config == outcome.best and ranked[-1].config.workers == 1


def test_a_candidate_that_never_holds_the_objective_ranks_last_with_why() -> None:
    slo = Slo(99, 10)
    stage = Stage("workers", (SYNC.config(1, 1), SYNC.config(2, 1)), (SYNC.config(1, 1), SYNC.config(2, 1)))
    never = Capacity(None, 100.0 / 64, (), "floor")
    held = Capacity(500.0, 520.0, (), "resolved")
    outcome = decide_capacity(stage, {stage.configs[0]: never, stage.configs[1]: held}, {})
    ranked = rank([outcome])
    assert ranked[0].config.workers == 2 and ranked[-1].measured.value is None
    assert ranked[-1].measured.cut_short == "no probe held the objective"
    assert slo.met(5.0)


def _capacity_stages() -> list[StageOutcome]:
    """The notes app's run as it went: gthread 2x3 beat 2x6 in refine ([1131, 1600) against
    [800, 1131)), then held only [566, 591) beside sync 1x1's [734, 766) in the last stage."""
    g3, g6, s1 = GTHREAD.config(2, 3), GTHREAD.config(2, 6), SYNC.config(1, 1)
    refine = Stage("refine 1", (g3, g6), (g3, g6))
    first = decide_capacity(refine, {g3: Capacity(1131.0, 1600.0, (), "probes"),
                                     g6: Capacity(800.0, 1131.0, (), "probes")}, {})
    last = Stage("classes", (g3, s1), (g3, s1))
    second = decide_capacity(last, {g3: Capacity(566.0, 591.0, (), "resolved"),
                                    s1: Capacity(734.0, 766.0, (), "resolved")}, {})
    return [first, second]


def test_capacities_rank_on_their_own_rates_not_chained_through_a_remeasured_incumbent() -> None:
    ranked = rank(_capacity_stages())
    order = [(r.config.worker_class, r.config.workers, r.config.threads) for r in ranked]
    # chained, 2x6 would be 800/1131 x 566 = 400 and rank last, below a winner its bracket clears
    assert order == [("gthread", 2, 6), ("sync", 1, 1), ("gthread", 2, 3)]
    assert [r.tied for r in ranked] == [True, False, False]
    assert ranked[1].to_best == pytest.approx(734 / 800) and ranked[1].vs_best is None
    assert not ranked[1].beside_best  # the top came from the refine stage, sync 1x1 from the last


def test_a_capacity_whose_brackets_do_not_overlap_across_stages_is_named() -> None:
    notes = unrepeated(_capacity_stages())
    assert len(notes) == 1
    assert notes[0].startswith("flask:gunicorn-gthread#w2t3's capacity did not repeat: [1,131, 1,600) in refine 1, "
                               "[566, 591) in classes")


def _trial(rate: float, p99: float, achieved: float, errors: int = 0, checks: tuple[str, ...] = ()) -> TrialResult:
    spec = TrialSpec("r1-x", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "oha", rate=rate, alias="w1t1")
    info = StackInfo("flask:gunicorn-sync", "flask", "Flask", "gunicorn", "Gunicorn", "sync", "sync", "WSGI",
                     "Sync", "-", "-", 1, 1)
    load = LoadResult("oha", int(achieved), 1.0, SocketErrors(timeout=errors), 0,
                      Latency(5.0, 1.0, p99, ((50.0, 5.0), (99.0, p99))), rate=rate)
    return TrialResult(spec, info, TrialStatus.OK, "", "", load=load, checks=checks)


def test_a_probe_holds_only_clean_at_its_rate_and_under_the_limit() -> None:
    slo = Slo(99, 100)
    assert tune_module._held(_trial(500, 40, 500), slo) == (40, True)
    assert tune_module._held(_trial(500, 140, 500), slo)[1] is False
    assert tune_module._held(_trial(500, 40, 500, errors=3), slo)[1] is False
    short = _trial(500, 40, 300, checks=("rate-not-reached: 300 of 500 req/s offered",))
    assert tune_module._held(short, slo)[1] is False


def test_the_deploy_command_comes_from_the_servers_argv_builder() -> None:
    catalog = build_catalog()
    command = deploy_command(catalog.resolve("flask:gunicorn-gthread"), 5, 4)
    assert command.startswith("gunicorn --bind 0.0.0.0:8000 --workers 5 --worker-class gthread")
    assert "--threads 4" in command and command.endswith("app_flask:wsgi")
    argv = deploy_argv(catalog.resolve("flask:gunicorn-sync"), 3, 1, module="mysite.wsgi")
    assert argv[-1] == "mysite.wsgi:wsgi" and "taskset" not in argv
    assert deploy_argv(catalog.resolve("starlette:uvicorn"), 2, 1)[:2] == ("uvicorn", "app_starlette:asgi")


def test_the_table_ranks_marks_ties_says_what_was_cut_short_and_how_to_deploy() -> None:
    outcomes, _ = _search(SYNC, 1, lambda c: {1: 500.0, 2: 1000.0, 3: 1002.0}[c.workers])
    ranked = rank(outcomes)
    tuning = Tuning("throughput", "hello", ("workers 1..3",), ranked, (("flask:gunicorn-sync", "workers", 3),),
                    not_measured=(("flask:gunicorn-sync#w9t1", "budget spent before stage 'refine 1'"),),
                    deploy=(("flask:gunicorn-sync#w2t1", "gunicorn --workers 2 app_flask:wsgi"),), budget_s=60)
    text = render_tuning(tuning)
    assert "tuning: throughput - hello, budget 60s" in text and "=1" in text
    assert "cut short: flask:gunicorn-sync#w9t1: budget spent before stage 'refine 1'" in text
    assert "gunicorn --workers 2 app_flask:wsgi" in text
    markdown = render_tuning_markdown(tuning)
    assert markdown.count("\n| ") == len(ranked) + 1 and "`gunicorn --workers 2 app_flask:wsgi`" in markdown


@pytest.mark.parametrize(("args", "says"), [
    (["--tune", "--method", "restart"], "--method restart cannot"),
    (["--tune", "--slo", "mean<100ms"], "unknown metric 'mean'"),
    (["--tune", "--slo", "p98<100ms"], "p98 is not a measured percentile"),
    (["--slo", "p99<100ms"], "add --tune"),
    (["--tune", "--workers", "3"], "drop --workers"),
    (["--tune", "--rate", "500"], "needs --slo"),
    (["--tune", "--slo", "p99<100ms", "--generator", "wrk"], "closed loop"),
    (["--tune", "--method", "duet"], "--method duet cannot"),
    (["--tune", "--stack", "go:net-http"], "reference server"),
    (["--tune", "--workload", "hello", "--workload", "db"], "one workload"),
])
def test_bad_tuning_input_is_one_line_and_exit_2(args: list[str], says: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--stack", "flask:gunicorn-sync", "--out", "/nonexistent/never", *args])
    err = capsys.readouterr().err
    assert code == 2 and says in err and err.count("\n") == 1


def test_tune_needs_the_classes_named(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(["run", "--tune", "--out", "/nonexistent/never"])
    err = capsys.readouterr().err
    assert code == 2 and "--tune needs --stack" in err and err.count("\n") == 1


def test_slo_without_oha_is_refused_before_anything_starts(monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(tune_module, "locate", lambda name: None)
    code = cli.main(["run", "--stack", "flask:gunicorn-sync", "--tune", "--slo", "p99<100ms",
                     "--out", "/nonexistent/never"])
    err = capsys.readouterr().err
    assert code == 2 and "--slo needs oha" in err and err.count("\n") == 1


def test_check_tune_accepts_a_plain_throughput_tuning() -> None:
    tune_module.check_tune(RunOptions(stacks=("flask:gunicorn-sync",)), None, resume=False, rates=())
    with pytest.raises(UserError, match="cannot be resumed"):
        tune_module.check_tune(RunOptions(), None, resume=True, rates=())


def test_a_best_whose_own_measuring_was_cut_short_is_said_to_be_a_floor() -> None:
    open_ended = {w: Capacity(100.0 * w, None, (), "budget") for w in (1, 2, 4, 9)}
    _, outcome = _capacity_ladder(open_ended, cut={1, 2, 4, 9})
    ranked = rank([outcome])
    assert ranked[0].rank == 1 and ranked[0].measured.cut_short
    tuning = Tuning("p99<100ms", "hello", (), ranked, (), deploy=((ranked[0].config.label, "gunicorn -w 9"),))
    text = render_tuning_markdown(tuning)
    assert "the best's own measuring was cut short" in text and "a floor, not a bracket" in text
    resolved = {w: Capacity(100.0 * w, 105.0 * w, (), "resolved") for w in (1, 2, 4, 9)}
    _, outcome = _capacity_ladder(resolved)
    assert "the best's own measuring" not in render_tuning_markdown(Tuning("p99<100ms", "hello", (), rank([outcome]), ()))
