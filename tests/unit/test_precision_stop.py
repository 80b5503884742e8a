"""--precision: rounds are added while an interval is wider than asked, and stop once every one
is narrow enough. The real stopping rule (allocation.open_rule, and wide_labels for the restart
method) decides from req/s scripted per stack and round in the fake generator; the servers
are real (stdlib) ones, the rounds the real scheduler's."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.precision import precision_note, row_half_width
from pywebbench.analyze.rows import summarize
from pywebbench.analyze.allocation import open_rule, ranking_rule
from pywebbench.analyze.precision import wide_labels
from pywebbench.loadgen.base import LoadRequest
from support.fake_loadgen import FakeLoadGenerator, synthetic_result
from pywebbench.measure.round_plan import Budget, RoundPlan, SetOutcome
from pywebbench.measure.rounds import Rounds
from pywebbench.plan.sessions import Session
from pywebbench.results.model import LoadResult, TrialResult, TrialSpec
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.measure.runner import LaunchLimits, Runner
from pywebbench.measure.roles import LoadTools
from pywebbench.catalog.workloads import HELLO
from support.builders import header, trial
from support.fakes import CurrentPythonBuilder, stdlib_stack

pytestmark = pytest.mark.usefixtures("short_quiet_samples")

BASE, TWO, THREE = (stdlib_stack("ok", name).id for name in ("one", "two", "three"))
PRECISION = 0.05
Script = Callable[[str, int], float]
"""req/s of a stack's window in a round."""


def _sessions(round_no: int) -> tuple[Session, ...]:
    sessions = []
    for name in ("one", "two", "three"):
        stack = stdlib_stack("ok", name)
        spec = TrialSpec(f"r{round_no}-{stack.id}-hello", stack.id, "hello", 10, 0.2, 0.0, round_no, "fake",
                         method="interleaved", settle_s=0.0)
        sessions.append(Session(stack, round_no, 1, 1, (spec,), (HELLO,)))
    return tuple(sessions)


def _scripted(script: Script) -> Callable[[LoadRequest], LoadResult]:
    def respond(request: LoadRequest) -> LoadResult:
        found = re.fullmatch(r"r(\d+)-(.+)-hello(\.warmup)?", request.label)
        assert found is not None, request.label
        return synthetic_result(script(found.group(2), int(found.group(1))), request.duration_s)
    return respond


def _run(tmp_path: Path, script: Script, *, min_rounds: int = 5, max_rounds: int = 30,
         adaptive: bool = False, ranking: bool = False,
         ) -> tuple[SetOutcome, list[tuple[int, tuple[str, ...]]], list[TrialResult]]:
    """The rounds of one comparison set under the real stopping rule (the precision rule, or with
    `ranking` the ranking's); what it said after each round."""
    writer = ResultsWriter(results_path(tmp_path), replace(header(), options={"precision": PRECISION}))
    runner = Runner(run_dir=tmp_path, writer=writer,
                    tools=LoadTools(FakeLoadGenerator(_scripted(script)), settle=lambda request, seconds, work_dir: None),
                    builder=CurrentPythonBuilder(), python="python3", limits=LaunchLimits(ready_timeout_s=10))
    rule = ranking_rule(BASE) if ranking else open_rule(BASE, PRECISION)
    answers: list[tuple[int, tuple[str, ...]]] = []

    def too_wide(trials: Sequence[TrialResult]) -> Sequence[str]:
        wide = tuple(rule(trials))
        answers.append((max(t.spec.round for t in trials), wide))
        return wide

    rounds = Rounds(runner, method="interleaved", rounds_per_launch=2, seed=3)
    outcome = rounds.run(RoundPlan(sessions=_sessions, first_round=1, min_rounds=min_rounds, max_rounds=max_rounds,
                                   too_wide=too_wide, budget=Budget(None), baseline=BASE, adaptive=adaptive,
                                   answered="placed" if ranking else "precision"))
    writer.finish("complete")
    writer.close()
    return outcome, answers, list(load_results(tmp_path).trials)


def _noisy_then_steady(stack_id: str, round_no: int) -> float:
    """The baseline and `three` steady; `two` swings ±10% for three rounds, then holds 1.2x."""
    if stack_id == TWO:
        return (1_320.0, 1_080.0, 1_320.0)[round_no - 1] if round_no <= 3 else 1_200.0
    return 1_000.0 if stack_id == BASE else 1_500.0


def test_rounds_are_added_while_an_interval_is_too_wide_and_stop_once_it_is_narrow(tmp_path: Path) -> None:
    # Three stacks hold two ratios: nothing to pool, so an interval needs three launches (five
    # rounds at two per launch) before the rule can stop.
    outcome, answers, trials = _run(tmp_path, _noisy_then_steady)
    assert outcome.stopped == "precision"
    assert outcome.rounds > 5  # the swinging rounds alone do not make a ±5% interval
    # asked after every round from the minimum on; `two`, and only it, kept the rounds coming
    assert [r for r, _ in answers] == list(range(5, outcome.rounds + 1))
    assert all(wide == (TWO,) for _, wide in answers[:-1])
    assert answers[-1] == (outcome.rounds, ())
    assert max(t.spec.round for t in trials) == outcome.rounds
    # the report, reading the stored run, agrees that the target was met when it stopped
    results = load_results(tmp_path)
    rows = {r.label: r for r in summarize(results, baseline=BASE).rows}
    assert all((w := row_half_width(r)) is not None and w <= PRECISION for r in rows.values())
    assert rows[TWO].ratio == pytest.approx(1.2, rel=0.05)
    assert precision_note(results, summarize(results, baseline=BASE)) == (
        f"precision: every interval within ±5.0% after {outcome.rounds} rounds")


def test_steady_figures_stop_at_the_minimum_rounds(tmp_path: Path) -> None:
    outcome, answers, _ = _run(tmp_path, lambda stack_id, round_no: {BASE: 1_000.0, TWO: 1_200.0}.get(stack_id, 800.0))
    assert (outcome.rounds, outcome.stopped) == (5, "precision")
    assert answers == [(5, ())]


def test_an_interval_that_never_narrows_runs_to_the_round_limit(tmp_path: Path) -> None:
    def swinging(stack_id: str, round_no: int) -> float:
        if stack_id == TWO:  # launch by launch (two rounds each): the launch means swing too
            return 1_500.0 if ((round_no - 1) // 2) % 2 else 900.0
        return 1_000.0 if stack_id == BASE else 1_500.0

    outcome, answers, _ = _run(tmp_path, swinging, max_rounds=8)
    assert (outcome.rounds, outcome.stopped) == (8, "max-rounds")
    # asked after rounds 5 to 7, each time naming `two`; the eighth was the last the limit allowed
    assert answers == [(r, (TWO,)) for r in range(5, 8)]


def test_adaptive_allocation_stops_measuring_a_settled_stack_and_keeps_the_open_one(tmp_path: Path) -> None:
    def swinging(stack_id: str, round_no: int) -> float:
        if stack_id == TWO:
            return 1_500.0 if ((round_no - 1) // 2) % 2 else 900.0
        return 1_000.0 if stack_id == BASE else 1_500.0

    outcome, answers, trials = _run(tmp_path, swinging, min_rounds=4, max_rounds=10, adaptive=True)
    assert (outcome.rounds, outcome.stopped) == (10, "max-rounds")
    rounds_of = {label: sorted(t.spec.round for t in trials if t.spec.stack_id == label) for label in (BASE, TWO, THREE)}
    # Rounds 1-4 are the pilot (two launches: no interval yet, so every stack stays); at the
    # third launch (round 5) `three` has its interval on three launches only after round 5, so
    # it leaves at the fourth (round 7) while `two` and the baseline go on.
    assert rounds_of[BASE] == rounds_of[TWO] == list(range(1, 11))
    assert rounds_of[THREE] == list(range(1, 7))
    rows = {r.label: r for r in summarize(load_results(tmp_path), baseline=BASE).rows}
    assert rows[THREE].ratio == pytest.approx(1.5) and rows[THREE].ratio_interval is not None


def test_the_ranking_rule_lets_a_placed_stack_go_and_measures_the_close_pair_until_it_resolves(
        tmp_path: Path) -> None:
    # `three` is far above both; `two` is 4% above the baseline with a 2% wobble per launch, so
    # their pair needs more launches than the pilot. `three` leaves once it is told apart from
    # `two` (and is the table's edge); the baseline and `two` go on until they are told apart.
    def close_pair(stack_id: str, round_no: int) -> float:
        launch = (round_no - 1) // 2
        wobble = (1.02, 0.98, 1.0, 1.01, 0.99)[launch % 5]
        return {BASE: 1_000.0, TWO: 1_040.0 * wobble}.get(stack_id, 2_000.0 * (1.0 + 0.01 * (launch % 2)))

    outcome, answers, trials = _run(tmp_path, close_pair, min_rounds=4, max_rounds=20, adaptive=True, ranking=True)
    assert outcome.stopped == "placed", (outcome, answers)
    assert answers[-1][1] == ()
    rounds_of = {label: sorted(t.spec.round for t in trials if t.spec.stack_id == label) for label in (BASE, TWO, THREE)}
    assert len(rounds_of[THREE]) < len(rounds_of[TWO]) == len(rounds_of[BASE]) == outcome.rounds
    assert any(THREE not in open_ and TWO in open_ for _, open_ in answers)
    rows = summarize(load_results(tmp_path), baseline=BASE).rows
    assert {r.label: r.next_verdict for r in rows}[TWO] == "different"


# --- the restart method: execute re-reads the stored run and reruns the wide stacks only ---------


def _restart_run(tmp_path: Path, values: dict[str, list[float]]) -> Path:
    writer = ResultsWriter(results_path(tmp_path), header())
    for stack_id, rps in values.items():
        for round_no, value in enumerate(rps, start=1):
            writer.add_trial(trial(stack_id, value, round_no=round_no, p50_ms=10.0))
    writer.finish("complete")
    writer.close()
    return tmp_path


def test_the_restart_loop_reruns_stacks_whose_interval_is_wide_or_missing(tmp_path: Path) -> None:
    run_dir = _restart_run(tmp_path, {
        # A median needs six repeats for a 95% interval (order statistics): three have none yet.
        "flask:gunicorn-sync": [1_000.0] * 6,  # no spread: done
        "starlette:uvicorn": [1_600.0, 2_400.0, 2_000.0, 1_700.0, 2_300.0, 2_000.0],  # ±20%: another round
        "falcon:meinheld": [3_000.0, 3_000.0, 3_000.0],  # three repeats, no interval yet: another round
    })
    assert wide_labels(run_dir, PRECISION) == {"starlette:uvicorn", "falcon:meinheld"}
    # a looser target is met by the spread one, not by the stack with no interval
    assert wide_labels(run_dir, 0.5) == {"falcon:meinheld"}
