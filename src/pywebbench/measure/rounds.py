"""Live servers and rounds: the interleaved and duet methods.

A comparison set is every stack of one sweep point. A *launch* starts all of them once,
verifies and warms each, and keeps them up for `rounds_per_launch` rounds; in each *round*
every (stack, workload) gets one short window, in a fresh random order, each after a short
discarded settle (randomized multiple interleaved trials, Abedi & Brecht 2017). Idle
servers stay up on the stack CPUs. The duet method instead loads two stacks at once, each
with its own generator, in a random start order (Bulej et al. 2020): every pair of the set
once per round up to five stacks, two closed cycles through them beyond (plan/duet_design.py),
so that every stack has the same load history. A finished window is recorded at once; the
stopping rule is asked after every round.
"""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import replace

from pywebbench.loadgen.base import LoadGenError
from pywebbench.plan.duet_design import duet_pairs, duet_windows
from pywebbench.plan.interval_rule import launches_needed
from pywebbench.plan.sessions import Session
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import Method, TrialResult, TrialSpec
from pywebbench.measure.round_plan import Budget, RoundPlan, SetOutcome
from pywebbench.measure.launch_blocks import neighbour_blocks, random_blocks, ranking
from pywebbench.measure.runner import Runner
from pywebbench.measure.isolation import Isolation
from pywebbench.measure.duet_window import DuetWindow
from pywebbench.measure.answers import odd_answers
from pywebbench.measure.window import LaunchFailed, Live
from pywebbench.catalog.workloads import Workload

EQUAL_SHARES = 1024


class Rounds:
    """Runs the rounds of one comparison set on live servers, by the interleaved or duet method."""

    def __init__(self, runner: Runner, *, method: Method, rounds_per_launch: int, seed: int,
                 on_note: Callable[[str], None] = lambda text: None) -> None:
        self.runner = runner
        self.method = Method(method)  # a caller may spell it as text
        self.rounds_per_launch = rounds_per_launch
        self.rng = random.Random(seed)
        self.on_note = on_note
        self.launches = 0
        self._odd_seen: set[tuple[str, str]] = set()
        self._round_seconds: list[float] = []
        self._launch_seconds: list[float] = []
        self.isolation = Isolation(runner.ledger, on_note, runner.holding)
        self.duet_window = DuetWindow(runner, self.isolation, self.rng)
        self._set_start = 0
        self._blocks: list[set[str]] = []
        self._cycles = 0
        self._rounds_of: Counter[str] = Counter()

    def run(self, plan: RoundPlan) -> SetOutcome:
        results_before = self._set_start = len(self.runner.results)
        self._blocks, self._rounds_of, self._cycles = [], Counter(), 0
        round_no = plan.first_round
        done = rounds_run = 0
        stopped = "rounds"
        lives: dict[str, Live] = {}
        failures: dict[str, LaunchFailed] = {}
        in_launch = 0
        launches = 0
        measuring: set[str] | None = None  # the labels this launch started; None: every one
        with ExitStack() as launch_stack:
            while True:
                relaunch = in_launch == 0 or in_launch >= self.rounds_per_launch
                why, wide = self._why_stop(plan, done, rounds_run, relaunch, results_before)
                if why is not None:
                    stopped = why
                    break
                if relaunch:
                    measuring = self._measuring(plan, wide, measuring)
                everyone = plan.sessions(round_no)
                sessions = [s for s in everyone if measuring is None or s.label in measuring]
                if not sessions:
                    break
                if relaunch:
                    launch_started = time.monotonic()
                    launch_stack.close()
                    self.runner.reset_pool()
                    self.launches += 1
                    launches += 1
                    lives, failures = self._launch(launch_stack, sessions)
                    # Runs first when the launch ends: every server winds down at once, then
                    # each launch's exit reaps its own (stopping them one by one cost ~1 s a launch).
                    launch_stack.callback(_terminate_all, tuple(lives.values()))
                    self._launch_seconds.append(time.monotonic() - launch_started)
                    in_launch = 0
                    if not _any_right_answer(sessions, lives):  # none started, or none answered right
                        stopped = self._record_unloaded(sessions, lives, failures)
                        break
                self._expect_the_round(plan, everyone, sessions, done, rounds_run)
                started = time.monotonic()
                if strategy_of(self.method).side_by_side:
                    self._duet_round(sessions, lives, failures, plan.baseline, plan.budget)
                else:
                    self._interleaved_round(sessions, lives, failures, plan.budget)
                self._round_seconds.append(time.monotonic() - started)
                in_launch += 1
                rounds_run += 1
                self._rounds_of.update({s.label for s in sessions})
                # Under launch blocks a round counts once every stack has had it (a cycle's end).
                done = min(self._rounds_of[s.label] for s in everyone) if plan.block is not None else rounds_run
                round_no += 1
                if rounds_run == 2 and plan.ratios:
                    self._say_the_noise(plan)
                self._expect_what_the_budget_buys(plan, sessions, done)
        self.runner.reset_pool()
        if (said := self.isolation.summary()) is not None:
            self.on_note(said)
        return SetOutcome(done, launches, stopped)

    def _why_stop(self, plan: RoundPlan, done: int, rounds_run: int, relaunch: bool,
                  results_before: int) -> tuple[str | None, Sequence[str] | None]:
        """Why no round follows (max-rounds, budget, the precision met, or the planned rounds
        done), else None; and the labels still wider than asked when the rule was asked."""
        if done >= plan.max_rounds:
            return "max-rounds", None
        # Only the first round runs whatever the budget says (it gives the estimate); its
        # windows stop at the deadline too, so a run ends within its budget plus one window.
        if rounds_run >= 1 and not plan.budget.allows(self._round_estimate(relaunch)):
            return "budget", None
        if done < plan.min_rounds:
            return None, None
        if plan.too_wide is None:
            return ("rounds" if plan.budget.deadline is None else None), None
        wide = plan.too_wide(self.runner.results[results_before:])
        return (None if wide else plan.answered), wide

    def _measuring(self, plan: RoundPlan, wide: Sequence[str] | None, measuring: set[str] | None) -> set[str] | None:
        """The labels the next launch starts (None: every one): its block, or under adaptive
        allocation the stacks still open, or the same as before."""
        if plan.block is not None:
            return self._next_block(plan)
        if plan.adaptive and wide is not None:
            return self._still_open(plan, wide, measuring)
        return measuring

    def _next_block(self, plan: RoundPlan) -> set[str]:
        """The next block of at most plan.block stacks, and the baseline: a random partition the
        first cycle, runs of neighbours in the ranking so far after (measure/launch_blocks.py)."""
        if not self._blocks:
            others = sorted({s.label for s in plan.sessions(plan.first_round)} - {plan.baseline})
            ranked = ranking(self.runner.results[self._set_start:], others) if self._cycles else None
            block = max(1, plan.block or 1)
            self._blocks = (random_blocks(others, block, self.rng) if ranked is None
                            else neighbour_blocks(ranked, block, self._cycles))
            self._cycles += 1
        return {plan.baseline, *self._blocks.pop(0)}

    def _still_open(self, plan: RoundPlan, wide: Sequence[str], measuring: set[str] | None) -> set[str]:
        """The stacks the next launch measures: those still open, and the baseline."""
        keep = {*wide, plan.baseline}
        every = {s.label for s in plan.sessions(plan.first_round)}
        before = every if measuring is None else measuring
        if settled := sorted(before - keep):
            done = "within the precision" if plan.answered == "precision" else "placed against both neighbours"
            self.on_note(f"allocation: {len(settled)} stack(s) {done} take no more windows "
                         f"({', '.join(settled[:6])}{' and more' if len(settled) > 6 else ''}); "
                         f"{len(keep & before) - 1} still open")
        return keep & before

    def _record_unloaded(self, sessions: list[Session], lives: dict[str, Live],
                         failures: dict[str, LaunchFailed]) -> str:
        """Every window of a launch with nothing to load, recorded once with why (each later launch
        would say the same); why the rounds stop: no server started, or none answered right."""
        self.runner.expect(sum(len(s.trials) for s in sessions))
        for session in sessions:
            live = lives.get(session.label)
            if live is None:
                self.runner.fail(session.trials, failures[session.label])
                continue
            for spec, workload in zip(session.trials, session.workloads, strict=True):
                self.runner.windows.measure(live, spec, workload)  # its wrong answer recorded, nothing loaded
        return "wrong-answers" if lives else "no-server"

    def _expect_the_round(self, plan: RoundPlan, everyone: Sequence[Session], sessions: list[Session], done: int,
                          rounds_run: int) -> None:
        """The planned rounds counted at once, then each added one (under a budget alone, what
        the time left buys is counted after each round instead)."""
        if rounds_run == 0:
            self.runner.expect(_windows_recorded(list(everyone), self.method) * max(1, plan.min_rounds))
        elif done >= plan.min_rounds and not self._budget_counts(plan):
            self.runner.expect(_windows_recorded(sessions, self.method))

    @staticmethod
    def _budget_counts(plan: RoundPlan) -> bool:
        """Does the budget alone end these rounds (no precision target)?"""
        return plan.budget.deadline is not None and plan.too_wide is None

    def _expect_what_the_budget_buys(self, plan: RoundPlan, sessions: list[Session], done: int) -> None:
        """Under a budget the progress counts the rounds the time left buys at the pace so far,
        not the planned rounds (the default duet run showed [56/336] with 3 rounds bought)."""
        left = plan.budget.seconds_left()
        if left is None or not self._budget_counts(plan) or not self._round_seconds:
            return
        # A round at the median pace, and its share of a launch.
        per_round = _median(self._round_seconds) + _median(self._launch_seconds) / max(1, self.rounds_per_launch)
        rounds = min(int(left // max(per_round, 1e-6)), max(0, plan.max_rounds - done))
        self.runner.expect_only(rounds * _windows_recorded(sessions, self.method))
        if len(self._round_seconds) == 1 and plan.block is None and plan.ratios:
            self._say_the_pace(done + rounds, len(sessions) - 1, left)

    def _say_the_pace(self, rounds: int, ratios: int, left: float) -> None:
        """After the first round, when its pace buys no interval (the plan line's estimate cannot
        know a workload's drain): one round per launch from now on if that buys the launches an
        interval needs, else what the budget buys and what would buy an interval."""
        launches = math.ceil(rounds / max(1, self.rounds_per_launch))
        needed = launches_needed(ratios)
        if launches >= needed:
            return
        round_s, launch_s = _median(self._round_seconds), _median(self._launch_seconds)
        pace = (f"at the first round's pace ({round_s:.0f} s a round, {launch_s:.0f} s a launch) the budget buys "
                f"about {rounds} round(s) in {launches} launch(es)")
        relaunching = 1 + int(left // max(round_s + launch_s, 1e-6))  # this launch, then one a round
        if self.rounds_per_launch > 1 and relaunching >= needed:
            # Rounds within a launch share its launch effect: under a budget that buys few
            # rounds, the launches are what an interval is made of.
            self.rounds_per_launch = 1
            self.on_note(f"{pace}, and an interval needs {needed} launches: one round per launch from now on "
                         f"({relaunching} launches)")
            return
        enough = math.ceil(needed * (launch_s + round_s) / 60)
        self.on_note(f"{pace}: no ratio interval (it needs {needed} launches); a budget of about {enough} min from "
                     f"the start buys {needed} launches of one round")

    def _say_the_noise(self, plan: RoundPlan) -> None:
        """After the second round: how much a window's ratio moves on this host today and what the
        run's launches resolve at that (plan.noise, analyze/host_noise.py), kept in the results."""
        if plan.noise is None:
            return
        said = plan.noise(self.runner.results[self._set_start:],
                          math.ceil(plan.min_rounds / max(1, self.rounds_per_launch)), self.rounds_per_launch)
        if said is not None:
            self.on_note(said[0])
            self.runner.writer.add_service(said[1])

    def _round_estimate(self, relaunch: bool) -> float:
        """The next round's wall time: the median round, plus the median launch if one is due."""
        return _median(self._round_seconds) + (_median(self._launch_seconds) if relaunch else 0.0)

    def _launch(self, stack: ExitStack, sessions: list[Session]) -> tuple[dict[str, Live], dict[str, LaunchFailed]]:
        """Start every server of the set, in a random order, then warm each one."""
        lives: dict[str, Live] = {}
        failures: dict[str, LaunchFailed] = {}
        order = list(sessions)
        self.rng.shuffle(order)
        for lane, session in enumerate(order, start=1):
            try:
                lives[session.label] = stack.enter_context(
                    self.runner.launch(session, launch=self.launches, lane=lane))
            except LaunchFailed as failed:
                failures[session.label] = failed
                self.on_note(f"{session.label} did not start: {failed.error.splitlines()[0]}")
        for odd in odd_answers({label: live.answers for label, live in lives.items()}):
            if (odd.label, odd.request) not in self._odd_seen:  # said once per server and request, not at every launch
                self._odd_seen.add((odd.label, odd.request))
                self.on_note(odd.line)
        for session in order:
            live = lives.get(session.label)
            if live is None:
                continue
            if strategy_of(self.method).side_by_side:
                self.runner.accountant.weigh(live.role, EQUAL_SHARES)
            for spec, workload in zip(session.trials, session.workloads, strict=True):
                if spec.warmup_s > 0 and live.problems.get(workload.name) is None:
                    try:
                        self.runner.windows.prepare(live, spec, workload, warmup_s=spec.warmup_s, settle_s=0.0)
                    except LoadGenError as exc:
                        self.on_note(f"{session.label} {workload.name}: warmup failed: {exc}")
        # Without a right answer nothing is loaded: no boot storm to wait out.
        self.isolation.launched(lives, wait=_any_right_answer(order, lives))
        return lives, failures

    def _interleaved_round(self, sessions: list[Session], lives: dict[str, Live],
                           failures: dict[str, LaunchFailed], budget: Budget) -> None:
        windows = [(session, spec, workload) for session in sessions
                   for spec, workload in zip(session.trials, session.workloads, strict=True)]
        self.rng.shuffle(windows)
        for session, spec, workload in windows:
            if not budget.allows(0.0):
                self.on_note("the budget ran out within a round: its remaining windows were not measured")
                return
            live = lives.get(session.label)
            if live is None:
                self.runner.fail((spec,), failures[session.label])
                continue
            self.isolation.before_window()
            result = self.runner.windows.measure(live, spec, workload, settle_s=spec.settle_s)
            self.isolation.measured(result, lambda: self._again(live, spec, workload))

    def _again(self, live: Live, spec: TrialSpec, workload: Workload) -> TrialResult:
        self.runner.expect(1)
        return self.runner.windows.measure(live, spec, workload, settle_s=spec.settle_s)

    def _duet_round(self, sessions: list[Session], lives: dict[str, Live], failures: dict[str, LaunchFailed],
                    baseline: str, budget: Budget) -> None:
        """Pairs of stacks loaded at the same time, in a fresh random order: every pair up to five
        stacks, two cycles beyond (plan/duet_design.py).

        Pairing each stack only with the baseline loaded the baseline in every window and the others
        in one: their histories differed, and so did their speed (A2/A ran 2% above 1 in a launch's
        first round and 3% below in its second, which no randomization of order could cancel). In
        both designs every stack is loaded in as many of the round's windows as every other, and A
        and A2 are exchangeable; the ratios to the baseline come from all of the round's pairs by
        least squares (`analyze.duet`).
        """
        assert any(s.label == baseline for s in sessions), "execute refuses a duet without its baseline"
        by_label = {s.label: s for s in sessions}
        chosen = duet_pairs(list(by_label), self._provisional_levels(), self.rng)
        pairs = [(by_label[a], by_label[b], i) for a, b in chosen for i in range(len(by_label[a].trials))]
        self.rng.shuffle(pairs)
        for first, second, i in pairs:
            if not budget.allows(0.0):
                self.on_note("the budget ran out within a round: its remaining windows were not measured")
                return
            spec, workload = first.trials[i], first.workloads[i]
            other_spec = next(sp for sp in second.trials if sp.workload == spec.workload)
            mine = replace(spec, partner=second.label, trial_id=f"{spec.trial_id}@{second.label}")
            theirs = replace(other_spec, partner=first.label, trial_id=f"{other_spec.trial_id}@{first.label}")
            live, partner = lives.get(first.label), lives.get(second.label)
            if live is None or partner is None:
                failed = failures.get(first.label) or failures[second.label]
                self.runner.fail((mine, theirs), failed)
                continue
            self.duet_window(live, mine, partner, theirs, workload)

    def _provisional_levels(self) -> dict[str, float]:
        """Each stack's mean log req/s over its valid duet windows of this set so far: the order
        the next round's neighbours are read from (partners vary at random, so it is rough)."""
        logs: dict[str, list[float]] = {}
        for trial in self.runner.results[self._set_start:]:
            if trial.valid and trial.spec.partner and trial.load is not None and trial.load.rps > 0:
                logs.setdefault(trial.spec.label, []).append(math.log(trial.load.rps))
        return {label: sum(values) / len(values) for label, values in logs.items()}

def _median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2] if values else 0.0


def _windows_recorded(sessions: list[Session], method: Method) -> int:
    """Trial records a round adds: one per window, or two per duet window (each side's)."""
    trials = sum(len(s.trials) for s in sessions)
    if not strategy_of(method).side_by_side or not sessions:
        return trials
    return 2 * duet_windows(len(sessions)) * (trials // len(sessions))


def _any_right_answer(sessions: Sequence[Session], lives: dict[str, Live]) -> bool:
    """Did any started server answer any of its workloads exactly, in the check before any load?"""
    return any(lives[s.label].problems.get(w.name) is None for s in sessions if s.label in lives for w in s.workloads)


def _terminate_all(lives: tuple[Live, ...]) -> None:
    for live in lives:
        live.server.terminate()
