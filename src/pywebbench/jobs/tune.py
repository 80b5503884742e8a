"""--tune: each selected worker class's workers x threads searched on live servers.

`tune(...)` is the engine: `run --tune` drives it through `execute` today, and `app --tune`
can hand it its own stacks the same way. It takes the stacks (one per worker class) and the
run's options, runs the stages of analyze/tuning.py as interleaved rounds (measure/rounds.py)
on a runner whose services are up, and returns the Tuning that report/tuning.py renders.
Every window is a trial in the results file the moment it ends, so an interrupted search
keeps each probe it made.

Without an objective a stage is closed-loop throughput: every candidate a window per round,
in a fresh random order, compared by paired ratios. With `--slo` each candidate's capacity
under it is searched open loop (oha, one process per kind of request of a mix; latency
corrected for coordinated omission): one round
advances every candidate's search by one probe, so all of them meet the machine's drift alike.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace

import psutil

from pywebbench.analyze.paired import Observation
from pywebbench.analyze.ratesearch import CapacitySearch
from pywebbench.analyze.pairing import cpu_per_request, rps_of
from pywebbench.analyze.tuning import Tuning, decide_capacity, decide_throughput, deployment_sizing, rank, unrepeated
from pywebbench.analyze.tuning_search import (
    MAX_THREADS, Bounds, ClassSearch, ClassSpace, Config, Figures, Stage, StageOutcome, bounds_for, ladder,
)
from pywebbench.catalog.deploy import deploy_command
from pywebbench.catalog.model import Stack
from pywebbench.catalog.registry import Catalog
from pywebbench.core.errors import UserError
from pywebbench.loadgen.oha import SPECTRUM
from pywebbench.measure.checks import Check
from pywebbench.measure.machine import usable_cpus
from pywebbench.measure.round_plan import Budget, RoundPlan
from pywebbench.measure.rounds import Rounds
from pywebbench.measure.runner import Runner
from pywebbench.plan.knob_values import window_seconds
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sessions import Session, Variant, make_plan
from pywebbench.plan.slo import Slo
from pywebbench.stage.tools import locate
from pywebbench.results.methods import strategy_of
from pywebbench.results.model import Method, TrialResult, TrialStatus

SLO_MAX_PROBES = 16
"""Enough to double from 100 to 25,600 req/s, bisect to 5% and repeat a few failed probes."""
SLO_RESOLUTION = 0.05
"""The capacity search stops once the bracket is within 5%."""
SLO_START_RATE = 100.0
"""The first offered rate of a search with no better guess (--rate sets it)."""
SLO_MAX_RATE = 100_000.0
TUNE_LANES = 16
"""pgbouncer lanes for a tuning run: more than the candidates of any stage live at once."""
ROUNDS_METHOD: Method = Method.INTERLEAVED
"""The rounds tune's candidates run in, side by side (check_tune refuses a method that is not tunable)."""
ROUND_OVERHEAD_S = 0.6
"""A window's cost beyond its duration and settle (generator start, checks), for the budget."""


@dataclass(frozen=True)
class TuneRequest:
    stacks: tuple[Stack, ...]
    """One per worker class to tune (gunicorn-sync and gunicorn-gthread are two)."""
    workload: str
    slo: Slo | None = None
    start_rate: float | None = None
    """The first offered rate of each capacity search (None: SLO_START_RATE)."""
    target_rate: float | None = None
    """--target-rate: the req/s a deployment must serve, in pods of the winner's capacity."""


def check_tune(options: RunOptions, slo: Slo | None, *, resume: bool, rates: Sequence[float]) -> None:
    """Every refusal of --tune, one line each, before anything starts."""
    if resume:
        raise UserError("a tuning run cannot be resumed; its probes are in the results file, run --tune again")
    if not strategy_of(options.method).tunable:
        raise UserError(f"--tune compares candidates side by side in interleaved rounds; --method {options.method} "
                        "cannot (drop --method)")
    if options.workers is not None or options.threads is not None:
        raise UserError("--tune searches workers and threads itself; drop --workers and --threads")
    if len(options.workloads) != 1:
        raise UserError(f"--tune tunes for one workload, got {len(options.workloads)} (give one --workload)")
    if len(rates) > 1:
        raise UserError("--tune takes at most one --rate: the first rate of the capacity search under --slo")
    if slo is None:
        if rates:
            raise UserError("--rate with --tune is the first rate of a capacity search: it needs --slo")
        return
    if not options.generator.open_loop:
        raise UserError(f"--slo searches open-loop rates with oha or vegeta; --generator {options.generator} is "
                        "closed loop")
    if locate(options.generator) is None:
        raise UserError(f"--slo needs {options.generator} for open-loop windows, and it is not installed; "
                        "fix: ./scripts/install.sh")
    if slo.percentile not in SPECTRUM:
        known = ", ".join(f"p{p:g}" for p in SPECTRUM if 0 < p < 100)
        raise UserError(f"--slo {slo.text!r}: p{slo.percentile:g} is not a measured percentile (one of {known})")


def check_stacks(stacks: Sequence[Stack], *, chosen: bool) -> None:
    """--tune needs the classes named, and Python servers to tune."""
    if not chosen:
        raise UserError("--tune needs --stack: the server classes to tune (e.g. --stack 'flask:gunicorn-*')")
    for stack in stacks:
        if stack.server.native is not None:
            raise UserError(f"{stack.id} is a reference server, not a Python one: nothing of it to tune")


def check_slo_flag(slo_text: str | None, tune: bool, target_rate: float | None = None) -> None:
    if slo_text is not None and not tune:
        raise UserError("--slo is the objective of a tuning run: add --tune")
    if target_rate is not None and (slo_text is None or not tune):
        raise UserError("--target-rate sizes a deployment in pods of the capacity under an SLO: add --tune --slo")


@dataclass
class _Engine:
    runner: Runner
    catalog: Catalog
    request: TuneRequest
    options: RunOptions
    rounds: Rounds
    on_note: Callable[[str], None]
    seed: int
    next_round: int = 1

    def __post_init__(self) -> None:
        self.available = usable_cpus()
        self.capacity_of: dict[Config, float] = {}
        self.failed_at: dict[Config, float] = {}
        """The lowest rate each candidate failed at in an earlier stage: the next search's ceiling."""

    def session(self, config: Config, stack: Stack, round_no: int, rate: float | None = None) -> Session:
        opts = replace(self.options, workers=config.workers, threads=config.threads if stack.server.threaded else None,
                       rate=rate, workloads=(self.request.workload,), seed=self.seed)
        plan = make_plan(self.catalog, opts, self.available, variants=[Variant(stack, alias=config.alias)],
                         rounds=[round_no])
        return plan.sessions[0]

    def round_seconds(self, candidates: int) -> float:
        return candidates * (window_seconds(self.options) + self.options.settle_s + ROUND_OVERHEAD_S)

    def run_stage(self, stage: Stage, stacks: dict[str, Stack], budget: Budget) -> StageOutcome:
        if self.request.slo is not None:
            return self._capacity(stage, stacks, budget, self.request.slo)
        return self._throughput(stage, stacks, budget)

    def _throughput(self, stage: Stage, stacks: dict[str, Stack], budget: Budget) -> StageOutcome:
        begin = len(self.runner.results)
        by_label = {c.label: c for c in stage.configs}
        precision = self.options.precision

        def sessions(round_no: int) -> list[Session]:
            return [self.session(c, stacks[c.stack], round_no) for c in stage.configs]

        def too_wide(trials: Sequence[TrialResult]) -> Sequence[str]:
            so_far = decide_throughput(stage, _windows(trials, by_label), {})
            return tuple(m.config.label for m in so_far.rows if m.config != so_far.best and precision is not None
                         and (m.vs_best is None or m.vs_best.half_width > precision))

        outcome = self.rounds.run(RoundPlan(
            sessions=sessions, first_round=self.next_round, min_rounds=self.options.rounds,
            max_rounds=self.options.max_rounds, too_wide=too_wide if precision else None, budget=budget,
            baseline=""))
        self.next_round += outcome.rounds
        trials = self.runner.results[begin:]
        figures = {}
        for config in stage.configs:
            mine = [t for t in trials if t.spec.label == config.label]
            valid = [t for t in mine if t.valid]
            cut = None
            rounds = len({t.spec.round for t in valid})
            if outcome.stopped == "budget" and rounds < self.options.rounds:
                cut = f"budget: {rounds} of {self.options.rounds} rounds"
            elif not valid and mine:
                cut = f"no valid window: {_first_error(mine)}"
            figures[config] = _figures(mine, valid, rounds, cut)
        return decide_throughput(stage, _windows(trials, by_label), figures)

    def _capacity(self, stage: Stage, stacks: dict[str, Stack], budget: Budget, slo: Slo) -> StageOutcome:
        begin = len(self.runner.results)
        fed = begin
        by_label = {c.label: c for c in stage.configs}
        incumbent = next((self.capacity_of[c] for c in stage.configs if c in self.capacity_of), None)
        # A new class starts where the app's capacity was under the classes before it: a far
        # better first guess than SLO_START_RATE, which costs a probe per doubling to climb from.
        elsewhere = statistics.median(self.capacity_of.values()) if self.capacity_of else None
        first = self.request.start_rate or incumbent or elsewhere or SLO_START_RATE
        searches = {c: CapacitySearch(slo, start=min(self.capacity_of.get(c, first), SLO_MAX_RATE),
                                      max_rate=SLO_MAX_RATE, resolution=SLO_RESOLUTION, max_probes=SLO_MAX_PROBES,
                                      confirm_failures=True, ceiling=self.failed_at.get(c))
                    for c in stage.configs}

        def feed() -> None:
            nonlocal fed
            for trial in self.runner.results[fed:]:
                config = by_label.get(trial.spec.label)
                search = searches.get(config) if config is not None else None
                if search is None or search.next_rate is None:
                    continue
                if trial.load is None and trial.status in (TrialStatus.SERVER_FAILED, TrialStatus.SERVER_OOM,
                                                           TrialStatus.UNAVAILABLE):
                    search.cut(f"{trial.status.value}: {_first_error([trial])}")
                    continue
                latency, held = _held(trial, slo)
                search.record_held(latency, held, rps_of(trial))
            fed = len(self.runner.results)

        def sessions(round_no: int) -> list[Session]:
            feed()
            return [self.session(c, stacks[c.stack], round_no, rate=s.next_rate)
                    for c, s in searches.items() if s.next_rate is not None]

        outcome = self.rounds.run(RoundPlan(
            sessions=sessions, first_round=self.next_round, min_rounds=SLO_MAX_PROBES, max_rounds=SLO_MAX_PROBES,
            too_wide=None, budget=budget, baseline="", ratios=False))
        self.next_round += outcome.rounds
        feed()
        trials = self.runner.results[begin:]
        figures = {}
        capacities = {}
        for config, search in searches.items():
            search.cut(outcome.stopped)
            capacity = search.result()
            capacities[config] = capacity
            if capacity.rate is not None:
                self.capacity_of[config] = capacity.rate
            if capacity.failed_at is not None:
                self.failed_at[config] = capacity.failed_at
            mine = [t for t in trials if t.spec.label == config.label]
            held = [t for t in mine if _held(t, slo)[1]]
            cut = None
            if capacity.stopped not in ("resolved", "max-rate", "floor"):
                bracket = f", bracket {capacity.bracket:.0%}" if capacity.bracket is not None else ""
                cut = f"search stopped ({capacity.stopped}) after {len(capacity.probes)} probes{bracket}"
            figures[config] = _figures(mine, held, len(capacity.probes), cut)
        return decide_capacity(stage, capacities, figures)


def _windows(trials: Sequence[TrialResult], by_label: dict[str, Config]) -> dict[Config, list[Observation]]:
    found: dict[Config, list[Observation]] = {}
    for t in trials:
        config = by_label.get(t.spec.label)
        value = rps_of(t)
        if config is not None and t.valid and value:
            found.setdefault(config, []).append(Observation(t.spec.launch or t.spec.round, t.spec.round, value))
    return found


def _held(trial: TrialResult, slo: Slo) -> tuple[float | None, bool]:
    """The probe's latency at the objective's percentile, and whether it held: a clean window
    that reached its offered rate with the latency under the limit."""
    load = trial.load
    if load is None:
        return None, False
    latency = load.latency.at(slo.percentile)
    short = any(c.startswith(Check.RATE_NOT_REACHED.value) for c in trial.checks)
    return latency, trial.valid and not short and slo.met(latency)


def _figures(mine: Sequence[TrialResult], counted: Sequence[TrialResult], rounds: int, cut: str | None) -> Figures:
    """CPU per request over the windows that count; the peak RSS of the server's tree over all."""
    cpu = [v * 1000.0 for t in counted if (v := cpu_per_request(t)) is not None]
    rss = [u.peak_rss_mb for t in mine if (u := t.usage("app")) is not None]
    return Figures(rounds, statistics.median(cpu) if cpu else None, max(rss) if rss else None, cut)


def _first_error(trials: Sequence[TrialResult]) -> str:
    error = next((t.error for t in trials if t.error), None)
    if error:
        return error.splitlines()[0]
    checks = next((t.checks for t in trials if t.checks), ())
    return checks[0] if checks else "errors under load"


def _mb_per_process(trials: Sequence[TrialResult]) -> float | None:
    sizes = [u.peak_rss_mb / u.processes for t in trials if (u := t.usage("app")) is not None and u.processes]
    return statistics.median(sizes) if sizes else None


def _space(stack: Stack) -> ClassSpace:
    server = stack.server
    return ClassSpace(stack.id, server.title, server.worker_class, server.threaded, server.single_process)


def _stage_budget(budget: Budget, now_weight: int, later_weight: int) -> Budget:
    """This stage's share of what is left: its candidates over all still expected."""
    if budget.deadline is None:
        return budget
    left = max(0.0, budget.deadline - time.monotonic())
    return Budget(time.monotonic() + left * now_weight / max(1, now_weight + later_weight))


def tune(runner: Runner, catalog: Catalog, request: TuneRequest, options: RunOptions, budget: Budget, *,
         stack_cpus: int, seed: int, on_note: Callable[[str], None] = lambda text: None) -> Tuning:
    """Search every class of `request.stacks` and rank what was measured (see the module doc)."""
    live_at_once = max(len(ladder(2 * stack_cpus + 1)), len(ladder(MAX_THREADS))) + 2
    available_mb = psutil.virtual_memory().available / 2**20
    bounds = bounds_for(stack_cpus, available_mb, live_at_once)
    engine = _Engine(runner, catalog, request, options,
                     Rounds(runner, method=ROUNDS_METHOD, rounds_per_launch=options.rounds_per_launch, seed=seed,
                            on_note=on_note), on_note, seed)
    on_note(f"tune: {bounds.text}")
    stages = _Stages(engine, budget, bounds, [ClassSearch(_space(s), bounds) for s in request.stacks], on_note)
    stages.search_each_class()
    stages.classes_side_by_side()
    stacks = {s.id: s for s in request.stacks}
    ranked = rank(stages.outcomes)
    deploy = tuple((r.config.label, deploy_command(stacks[r.config.stack], r.config.workers, r.config.threads))
                   for r in ranked if r.tied and r.measured.value is not None and not r.open_tie
                   and stacks[r.config.stack].server.native is None)
    tuning = Tuning(
        objective=request.slo.text if request.slo is not None else "throughput", workload=request.workload,
        bounds=(bounds.text,), ranked=ranked, stages=tuple(stages.run_so_far), not_measured=tuple(stages.not_measured),
        deploy=deploy, **deployment_sizing(ranked, {label for label, _ in deploy}, options.cpu_quota, request.target_rate),
        budget_s=options.budget_s, notes=(_objective_note(request.slo, options.generator), *unrepeated(stages.outcomes)),
    )
    runner.writer.add_tuning(asdict(tuning))  # the answer in the results file: `report` and `compare` read it
    return tuning


def _objective_note(slo: Slo | None, generator: str) -> str:
    if slo is None:
        return ("throughput: closed-loop req/s (trimmed geometric mean over rounds, 95% interval); candidates tied "
                "with the best where their paired ratio's 95% interval holds 1")
    return (f"capacity: the highest offered rate (open loop, {generator}) whose corrected p{slo.percentile:g} stayed under "
            f"{slo.limit_ms:g} ms, searched to {SLO_RESOLUTION:.0%}; its interval is the search's bracket; candidates are ranked on "
            "their own last capacity, and those whose brackets overlap the best's are tied")


@dataclass
class _Stages:
    """The order of the stages: each class's own (workers, threads, refinements) one class after
    another, then the classes' bests side by side; each stage gets its share of the budget left."""

    engine: _Engine
    budget: Budget
    bounds: Bounds
    searches: list[ClassSearch]
    on_note: Callable[[str], None]
    outcomes: list[StageOutcome] = field(default_factory=list)
    run_so_far: list[tuple[str, str, int]] = field(default_factory=list)
    not_measured: list[tuple[str, str]] = field(default_factory=list)
    finals: list[StageOutcome] = field(default_factory=list)

    def expected(self, later: Sequence[ClassSearch]) -> int:
        """Candidate windows the classes not yet started would need, by their first estimates."""
        total = 0
        for search in later:
            probe = ClassSearch(search.space, self.bounds)
            total += len(probe.first().configs) + probe.estimate_left()
        return total + (2 * len(self.searches) if len(self.searches) > 1 else 0)

    def run(self, stage: Stage, later_weight: int) -> StageOutcome | None:
        share = _stage_budget(self.budget, len(stage.configs), later_weight)
        if not self.budget.allows(self.engine.round_seconds(len(stage.configs)) * 2):
            self.not_measured.extend((c.label, f"budget spent before stage {stage.name!r}") for c in stage.new)
            return None
        owner = stage.configs[0].stack if len({c.stack for c in stage.configs}) == 1 else "every class"
        self.on_note(f"tune: {owner} stage {stage.name!r}: " + ", ".join(
            c.alias if owner != "every class" else c.label for c in stage.configs))
        stacks = {s.id: s for s in self.engine.request.stacks}
        outcome = self.engine.run_stage(stage, stacks, share)
        self.outcomes.append(outcome)
        self.run_so_far.append((owner, stage.name, len(stage.configs)))
        return outcome

    def search_each_class(self) -> None:
        runner = self.engine.runner
        for index, search in enumerate(self.searches):
            stage: Stage | None = search.first()
            last: StageOutcome | None = None
            while stage is not None:
                outcome = self.run(stage, search.estimate_left() + self.expected(self.searches[index + 1:]))
                if outcome is None:
                    break
                last = outcome
                trials = [t for t in runner.results if t.spec.stack_id == search.space.stack]
                stage = search.next(outcome, _mb_per_process(trials))
            if last is not None:
                self.finals.append(last)

    def classes_side_by_side(self) -> None:
        finals = self.finals
        if len(finals) > 1 and all(f.best is not None for f in finals):
            # Each class's best alone: its ties keep their own stage's figures. Carrying every
            # tie made this stage as large as all the others when a class's searches were cut
            # short (every candidate tied), and left it too little budget to resolve any of them.
            carried = tuple(f.best for f in finals if f.best is not None)
            if self.run(Stage("classes", carried, ()), 0) is None:
                self.on_note("tune: no budget left to measure the classes' bests side by side: they are ranked by "
                             "their own figures, unpaired")
