"""The round scheduler on real (stdlib) servers with the fake generator: launches, order, settle, stopping."""

from __future__ import annotations

import random
import time
from collections import Counter
from pathlib import Path

import psutil
import pytest

from pywebbench.loadgen.base import LoadRequest
from support.fake_loadgen import FakeLoadGenerator
from pywebbench.measure.round_plan import Budget, RoundPlan
from pywebbench.measure.rounds import Rounds
from pywebbench.plan.sessions import Session
from pywebbench.results.model import TrialResult, TrialSpec
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.measure.runner import LaunchLimits, Runner
from pywebbench.measure.roles import LoadTools
from pywebbench.catalog.workloads import HELLO
from support.builders import header
from support.fakes import CurrentPythonBuilder, stdlib_stack

pytestmark = pytest.mark.usefixtures("short_quiet_samples")

NAMES = ("one", "two", "three")


def _sessions(round_no: int, method: str = "interleaved", names: tuple[str, ...] = NAMES) -> tuple[Session, ...]:
    sessions = []
    for name in names:
        stack = stdlib_stack("ok", name)
        spec = TrialSpec(f"r{round_no}-{stack.id}-hello", stack.id, "hello", 10, 0.2, 0.0, round_no, "fake",
                         method=method, settle_s=0.05)
        sessions.append(Session(stack, round_no, 1, 1, (spec,), (HELLO,)))
    random.Random(round_no).shuffle(sessions)
    return tuple(sessions)


class _Setup:
    def __init__(self, tmp_path: Path, method: str = "interleaved") -> None:
        self.settles: list[tuple[str, float]] = []
        self.generator = FakeLoadGenerator()
        self.writer = ResultsWriter(results_path(tmp_path), header())
        self.runner = Runner(run_dir=tmp_path, writer=self.writer, tools=LoadTools(self.generator, settle=self._settle),
                             builder=CurrentPythonBuilder(), python="python3", limits=LaunchLimits(ready_timeout_s=10))
        self.rounds = Rounds(self.runner, method=method, rounds_per_launch=2, seed=3)

    def _settle(self, request: LoadRequest, seconds: float, work_dir: Path) -> None:
        self.settles.append((request.url, seconds))

    def plan(self, *, min_rounds: int = 3, max_rounds: int = 50, too_wide: object = None,
             budget: Budget = Budget(None), method: str = "interleaved", names: tuple[str, ...] = NAMES,
             block: int | None = None) -> RoundPlan:
        return RoundPlan(sessions=lambda r: _sessions(r, method, names), first_round=1, min_rounds=min_rounds,
                         max_rounds=max_rounds, too_wide=too_wide,  # type: ignore[arg-type]
                         budget=budget, baseline=stdlib_stack("ok", "one").id, block=block)

    def close(self) -> None:
        self.writer.finish("complete")
        self.writer.close()


def test_every_stack_once_per_round_in_a_fresh_order_with_a_settle_before_each_window(tmp_path: Path) -> None:
    setup = _Setup(tmp_path)
    progress: list[tuple[int, int]] = []
    setup.runner.on_progress = lambda p: progress.append((p.done, p.total))
    outcome = setup.rounds.run(setup.plan(min_rounds=5))
    setup.close()
    assert outcome.rounds == 5 and outcome.stopped == "rounds"
    # the progress total counts every planned round from the start (it used to restart each round)
    assert {total for done, total in progress if done} == {15}
    trials = load_results(tmp_path).trials
    assert Counter(t.spec.round for t in trials) == {r: 3 for r in range(1, 6)}
    assert all(Counter(t.spec.stack_id for t in trials if t.spec.round == r) == Counter(
        stdlib_stack("ok", n).id for n in NAMES) for r in range(1, 6))
    orders = {tuple(t.spec.stack_id for t in trials if t.spec.round == r) for r in range(1, 6)}
    assert len(orders) > 1
    # a settle before every window, on the port of the window that follows; nothing recorded of it
    windows = [r for r in setup.generator.requests if not r.label.endswith("warmup")]
    assert len(setup.settles) == len(windows) == 15
    assert [url for url, _ in setup.settles] == [w.url for w in windows]
    assert all(seconds == 0.05 for _, seconds in setup.settles)
    assert all(t.spec.settle_s == 0.05 and t.valid for t in trials)


def test_servers_live_across_a_launch_and_restart_for_the_next(tmp_path: Path) -> None:
    setup = _Setup(tmp_path)
    outcome = setup.rounds.run(setup.plan(min_rounds=5))
    setup.close()
    trials = load_results(tmp_path).trials
    assert outcome.launches == 3  # two rounds per launch: 1-2, 3-4, 5
    assert {t.spec.round: t.spec.launch for t in trials} == {1: 1, 2: 1, 3: 2, 4: 2, 5: 3}
    # one server process per stack and launch: the argv (its port) repeats within a launch only
    ports = {(t.spec.launch, t.spec.stack_id): t.stack.argv for t in trials}
    assert len(set(ports.values())) == 9
    for launch in (1, 2):
        first = {t.spec.stack_id: t.stack.argv for t in trials if t.spec.round == 2 * launch - 1}
        second = {t.spec.stack_id: t.stack.argv for t in trials if t.spec.round == 2 * launch}
        assert first == second


def test_the_stopping_rule_adds_rounds_until_no_interval_is_too_wide(tmp_path: Path) -> None:
    setup = _Setup(tmp_path)
    asked: list[int] = []

    def too_wide(trials: list[TrialResult]) -> tuple[str, ...]:
        rounds = max(t.spec.round for t in trials)
        asked.append(rounds)
        return ("x",) if rounds < 7 else ()

    outcome = setup.rounds.run(setup.plan(min_rounds=3, too_wide=too_wide))
    setup.close()
    assert outcome.rounds == 7 and outcome.stopped == "precision"
    assert asked == [3, 4, 5, 6, 7]  # asked after every round once the minimum is done


def test_the_budget_and_the_round_limit_stop_it(tmp_path: Path) -> None:
    setup = _Setup(tmp_path)
    spent = setup.rounds.run(setup.plan(min_rounds=3, too_wide=lambda trials: ("x",),
                                        budget=Budget(time.monotonic() - 1)))
    # A spent budget ends the run within one window: no minimum of rounds comes before it.
    assert spent.rounds == 1 and spent.stopped == "budget"
    assert setup.runner.results == []
    short = setup.rounds.run(setup.plan(min_rounds=3, too_wide=lambda trials: ("x",),
                                        budget=Budget(time.monotonic() + 0.05)))
    assert short.stopped == "budget" and len(setup.runner.results) < 3  # cut within the first round
    capped = setup.rounds.run(setup.plan(min_rounds=1, max_rounds=4, too_wide=lambda trials: ("x",)))
    setup.close()
    assert capped.rounds == 4 and capped.stopped == "max-rounds"


@pytest.mark.serial  # the wall clock (a budget) or a process's CPU time: a neighbour moves it
def test_under_a_budget_the_progress_counts_the_rounds_the_time_left_buys(tmp_path: Path) -> None:
    setup = _Setup(tmp_path)
    progress: list[tuple[int, int]] = []
    setup.runner.on_progress = lambda p: progress.append((p.done, p.total))
    outcome = setup.rounds.run(setup.plan(min_rounds=40, budget=Budget(time.monotonic() + 3.0)))
    setup.close()
    assert outcome.stopped == "budget" and 1 <= outcome.rounds < 40
    # The 40 planned rounds (120 windows) are the total until the first round has shown the pace;
    # from then on the total is what is recorded and what the time left buys, and it ends near done.
    after_first = [total for done, total in progress if done > 3]
    assert after_first and max(after_first) < 120
    done, total = progress[-1]
    assert total - done <= 6


def test_when_the_first_round_s_pace_buys_no_interval_the_run_says_what_would(tmp_path: Path) -> None:
    notes: list[str] = []
    rounds = Rounds(_Setup(tmp_path).runner, method="duet", rounds_per_launch=2, seed=3, on_note=notes.append)
    rounds._round_seconds, rounds._launch_seconds = [600.0], [120.0]
    rounds._say_the_pace(6, 25, 3000.0)  # three launches of two rounds: a table of 25 ratios needs two
    assert notes == []
    rounds._say_the_pace(2, 25, 650.0)  # not even one more round and launch: 720 s
    assert len(notes) == 1 and "buys about 2 round(s) in 1 launch(es): no ratio interval (it needs 2" in notes[0]
    assert "a budget of about 24 min from the start buys 2 launches of one round" in notes[0]
    assert rounds.rounds_per_launch == 2


def test_when_one_round_per_launch_buys_an_interval_the_rounds_relaunch_each_round(tmp_path: Path) -> None:
    # Seed 003's duet under 30 minutes: 701 s a round, 133 s a launch, 880 s left after the
    # first round. Two rounds in one launch give no interval; a second launch of one round does.
    notes: list[str] = []
    rounds = Rounds(_Setup(tmp_path).runner, method="duet", rounds_per_launch=2, seed=3, on_note=notes.append)
    rounds._round_seconds, rounds._launch_seconds = [701.0], [133.0]
    rounds._say_the_pace(2, 25, 880.0)
    assert rounds.rounds_per_launch == 1
    assert len(notes) == 1 and notes[0].endswith("an interval needs 2 launches: one round per launch from now on "
                                                 "(2 launches)"), notes


@pytest.mark.serial  # looks for leftovers machine-wide: a parallel worker's servers would count
def test_no_server_is_left_after_the_rounds(tmp_path: Path) -> None:
    before = {p.pid for p in psutil.process_iter()}
    setup = _Setup(tmp_path)
    setup.rounds.run(setup.plan(min_rounds=3))
    setup.close()
    left = [p for p in psutil.process_iter(["cmdline"])
            if p.pid not in before and "hello_server.py" in " ".join(p.info["cmdline"] or [])]
    assert left == []


def test_duet_loads_every_pair_once_a_round_so_every_stack_has_the_same_history(tmp_path: Path) -> None:
    setup = _Setup(tmp_path, method="duet")
    setup.rounds.run(setup.plan(min_rounds=3, method="duet"))
    setup.close()
    trials = load_results(tmp_path).trials
    assert len(trials) == 3 * 6  # per round: three pairs, each recording both sides
    for round_no in (1, 2, 3):
        sides = [t for t in trials if t.spec.round == round_no]
        pairs = {frozenset((t.spec.stack_id, t.spec.partner)) for t in sides}
        assert len(pairs) == 3 and all(len(p) == 2 for p in pairs)
        # every stack loaded in the same number of windows: none has a lighter history than another
        assert set(Counter(t.spec.stack_id for t in sides).values()) == {2}
    assert all(t.spec.slot in (1, 2) for t in trials)
    ids = [t.spec.trial_id for t in trials]
    assert len(set(ids)) == len(ids)  # one id per side of each pair
    # the two generators of a window ran at once: their requests were issued together
    labels = [r.label for r in setup.generator.requests if not r.label.endswith("warmup")]
    assert len(labels) == 18


def test_a_duet_of_seven_stacks_loads_two_cycles_a_round_each_stack_in_four_windows(tmp_path: Path) -> None:
    names = ("one", "two", "three", "four", "five", "six", "seven")
    setup = _Setup(tmp_path, method="duet")
    setup.rounds.run(setup.plan(min_rounds=2, max_rounds=2, method="duet", names=names))
    setup.close()
    trials = load_results(tmp_path).trials
    assert len(trials) == 2 * 14 * 2  # per round 2 x 7 pairs (not all 21), each recording both sides
    for round_no in (1, 2):
        sides = [t for t in trials if t.spec.round == round_no]
        pairs = {frozenset((t.spec.stack_id, t.spec.partner)) for t in sides}
        assert len(pairs) == 14
        assert set(Counter(t.spec.stack_id for t in sides).values()) == {4}  # the same history for all
        reached, todo = {sides[0].spec.stack_id}, [sides[0].spec.stack_id]
        while todo:  # one connected graph: every ratio to the baseline comes out of the round's fit
            here = todo.pop()
            for pair in pairs:
                if here in pair and (other := next(iter(pair - {here}))) not in reached:
                    reached.add(other)
                    todo.append(other)
        assert len(reached) == 7


def test_launch_blocks_start_a_few_stacks_and_the_baseline_and_cycle_until_each_had_its_rounds(tmp_path: Path) -> None:
    names = ("one", "two", "three", "four", "five", "six", "seven")
    setup = _Setup(tmp_path)
    outcome = setup.rounds.run(setup.plan(min_rounds=2, names=names, block=2))
    setup.close()
    trials = load_results(tmp_path).trials
    baseline = stdlib_stack("ok", "one").id
    # Six stacks in blocks of two: a cycle of three launches of two rounds, each launch starting
    # its block and the baseline only; every stack had its two rounds, the baseline six.
    assert outcome.launches == 3 and outcome.rounds == 2
    per_round: dict[int, set[str]] = {}
    for t in trials:
        per_round.setdefault(t.spec.round, set()).add(t.spec.stack_id)
    assert len(per_round) == 6 and all(len(seen) == 3 and baseline in seen for seen in per_round.values())
    counts = Counter(t.spec.stack_id for t in trials)
    assert counts[baseline] == 6 and {n for s, n in counts.items() if s != baseline} == {2}
    assert {t.spec.launch for t in trials if t.spec.stack_id != baseline} == {1, 2, 3}
    for launch in (1, 2, 3):  # a block's stacks share their launch: no stack in two blocks of a cycle
        assert len({t.spec.stack_id for t in trials if t.spec.launch == launch}) == 3


def _sessions_of(modes: dict[str, str], round_no: int) -> tuple[Session, ...]:
    """One session per stack name, its stdlib server in the given mode (ok, wrong, die)."""
    sessions = []
    for name, mode in modes.items():
        stack = stdlib_stack(mode, name)
        spec = TrialSpec(f"r{round_no}-{stack.id}-hello", stack.id, "hello", 10, 0.2, 0.1, round_no, "fake",
                         method="interleaved", settle_s=0.05)
        sessions.append(Session(stack, round_no, 1, 1, (spec,), (HELLO,)))
    return tuple(sessions)


def _run_modes(tmp_path: Path, modes: dict[str, str]) -> tuple[_Setup, object]:
    setup = _Setup(tmp_path)
    outcome = setup.rounds.run(RoundPlan(sessions=lambda r: _sessions_of(modes, r), first_round=1, min_rounds=5,
                                         max_rounds=50, too_wide=None, budget=Budget(None),
                                         baseline=stdlib_stack(next(iter(modes.values())), "one").id))
    setup.close()
    return setup, outcome


def test_when_no_server_answers_right_the_rounds_stop_after_the_first_launch(tmp_path: Path) -> None:
    started = time.monotonic()
    setup, outcome = _run_modes(tmp_path, {"one": "wrong", "two": "wrong", "three": "die"})
    assert (outcome.rounds, outcome.launches, outcome.stopped) == (0, 1, "wrong-answers")  # type: ignore[attr-defined]
    trials = load_results(tmp_path).trials
    assert sorted((t.stack.server, t.status.value) for t in trials) == [
        ("one", "invalid-response"), ("three", "server-failed"), ("two", "invalid-response")]
    assert all(t.spec.round == 1 and t.load is None for t in trials)
    assert setup.generator.requests == [] and setup.settles == []  # no warmup, no settle, no window
    assert time.monotonic() - started < 10  # no relaunch, no wait for a boot storm before windows never run


def test_one_server_answering_right_keeps_the_rounds_going(tmp_path: Path) -> None:
    _, outcome = _run_modes(tmp_path, {"one": "ok", "two": "wrong"})
    assert (outcome.rounds, outcome.stopped) == (5, "rounds")  # type: ignore[attr-defined]
    trials = load_results(tmp_path).trials
    assert {t.status.value for t in trials if t.stack.server == "two"} == {"invalid-response"}
    assert {t.status.value for t in trials if t.stack.server == "one"} == {"ok"}
