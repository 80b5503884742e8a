"""Tuning's decisions: a stage's best and its ties, the final ranking, and the answer.

The candidates and stages are analyze/tuning_search.py's; how a stage's windows are made
(interleaved rounds on live servers, or an open-loop capacity search per candidate) is the
caller's (jobs/tune.py). Throughput stages compare neighbours by their paired ratio per round (a
tie: the 95% interval holds 1); capacity stages by the search's bracket (a tie: the brackets
overlap, so the search could not tell them apart). With several classes, a last stage holds
each class's best and its ties together, and `rank` orders every candidate once.

Ranking across stages differs by objective. A throughput is only known relative to the
candidates measured beside it (a paired ratio per round), so a candidate's figure is chained
through the incumbents it met. A capacity is an absolute rate measured by its own search, so
candidates are ranked on their own (last) capacities and tied where the brackets overlap the
top's: chaining would multiply every re-measured incumbent's noise into the candidates it
beat (the notes app's run ranked a [800, 1131) bracket below a [734, 766) winner that way).
A candidate measured in several stages is a repeat of itself; `unrepeated` names those whose
brackets do not overlap, a sign the probes were noisier than their brackets say.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import cattrs

from pywebbench.analyze.paired import Interval, Observation, paired_ratios, ratio_interval, statistic_value
from pywebbench.analyze.ratesearch import Capacity
from pywebbench.core.errors import UserError
from pywebbench.results.model import ResultSet
from pywebbench.analyze.tuning_search import Config, Figures, Measured, Stage, StageOutcome
from pywebbench.catalog.deploy import kubernetes_resources, pods_needed


def decide_throughput(stage: Stage, windows: Mapping[Config, Sequence[Observation]],
                      figures: Mapping[Config, Figures]) -> StageOutcome:
    """The best by its req/s over the stage's rounds; each other candidate's paired ratio to it."""
    values = {c: statistic_value(windows.get(c, ())) for c in stage.configs}
    scored = [c for c in stage.configs if values[c] is not None]
    if not scored:
        return StageOutcome(stage, tuple(_unmeasured(c, figures) for c in stage.configs), None)
    best = max(scored, key=lambda c: (values[c] or 0.0, -c.workers, -c.threads))
    rows = []
    for config in stage.configs:
        obs = windows.get(config, ())
        own = ratio_interval(obs) if len(obs) >= 2 else None
        interval = (own.low, own.high) if own is not None else None
        fig = figures.get(config, Figures())
        if values[config] is None:
            rows.append(_unmeasured(config, figures))
            continue
        if config == best:
            rows.append(Measured(config, values[config], interval, 1.0, None, True, fig.rounds, fig.cpu_ms_per_req,
                                 fig.rss_mb, cut_short=fig.cut_short))
            continue
        ratios = paired_ratios(obs, windows[best])
        paired = ratio_interval(ratios)
        # No interval (fewer than two shared rounds): not told apart, so read as tied.
        tied = paired is None or not paired.excludes_one
        rows.append(Measured(config, values[config], interval, statistic_value(ratios), paired, tied, fig.rounds,
                             fig.cpu_ms_per_req, fig.rss_mb, cut_short=fig.cut_short))
    return StageOutcome(stage, tuple(rows), best)


def decide_capacity(stage: Stage, capacities: Mapping[Config, Capacity],
                    figures: Mapping[Config, Figures]) -> StageOutcome:
    """The best by its capacity under the objective; tied where the brackets overlap."""
    held = {c: cap.rate for c, cap in capacities.items() if cap.rate is not None and c in stage.configs}
    if not held:
        return StageOutcome(stage, tuple(_unmeasured(c, figures, capacities.get(c)) for c in stage.configs), None)
    best = max(held, key=lambda c: (held[c], -c.workers, -c.threads))
    best_rate = held[best]
    rows = []
    for config in stage.configs:
        cap = capacities.get(config)
        fig = figures.get(config, Figures())
        if cap is None or cap.rate is None:
            rows.append(_unmeasured(config, figures, cap))
            continue
        ceiling = cap.failed_at if cap.failed_at is not None else math.inf
        tied = config == best or ceiling > best_rate  # its capacity may lie as high as the best's
        interval = (cap.rate, cap.failed_at) if cap.failed_at is not None else None
        rows.append(Measured(config, cap.rate, interval, cap.rate / best_rate, None, tied, fig.rounds,
                             fig.cpu_ms_per_req, fig.rss_mb, cap, fig.cut_short))
    return StageOutcome(stage, tuple(rows), best)


def _unmeasured(config: Config, figures: Mapping[Config, Figures], cap: Capacity | None = None) -> Measured:
    fig = figures.get(config, Figures())
    why = fig.cut_short or ("no probe held the objective" if cap is not None else "no valid window")
    return Measured(config, None, None, None, None, False, fig.rounds, fig.cpu_ms_per_req, fig.rss_mb, cap, why)


@dataclass(frozen=True)
class Ranked:
    rank: int
    measured: Measured
    """The candidate as its last stage measured it."""
    stage: str
    to_best: float | None
    """Its objective relative to the overall best's, chained through the incumbents it was
    measured beside (paired ratios) where it never met the best itself."""
    vs_best: Interval | None
    """The paired interval to the best, where they shared a stage (throughput)."""
    tied: bool
    """Tied with the overall best (the best itself too)."""
    beside_best: bool
    """Measured in the same stage as the overall best."""

    @property
    def config(self) -> Config:
        return self.measured.config

    @property
    def open_tie(self) -> bool:
        """Tied with the best only because its own measuring was cut short: it may lie as high
        as the best or far below it, so it is not offered to deploy."""
        return self.tied and self.rank != 1 and bool(self.measured.cut_short)


def rank(outcomes: Sequence[StageOutcome]) -> tuple[Ranked, ...]:
    """Every candidate once, best first, from the stage it was last measured in."""
    last: dict[Config, int] = {}
    for index, outcome in enumerate(outcomes):
        for m in outcome.rows:
            last[m.config] = index
    row_of = {c: next(m for m in outcomes[i].rows if m.config == c) for c, i in last.items()}
    if any(m.capacity is not None for m in row_of.values()):
        return _rank_capacity(outcomes, last, row_of)
    memo: dict[Config, float | None] = {}

    def estimate(config: Config) -> float | None:
        """An absolute objective for every candidate: its ratio to its last stage's best, times
        that best's own estimate (from a later stage, where it was carried), down to a stage
        winner that went no further, whose own figure it is."""
        if config in memo:
            return memo[config]
        memo[config] = None  # guards a cycle; stages only carry forward, so none is expected
        m = row_of[config]
        best = outcomes[last[config]].best
        if m.value is None or m.ratio is None or best is None:
            found = None
        elif best == config:
            found = m.value
        else:
            base = estimate(best)
            found = None if base is None else m.ratio * base
        memo[config] = found
        return found

    estimates = {c: estimate(c) for c in last}
    scored = [c for c in last if estimates[c] is not None]
    order = sorted(scored, key=lambda c: (-(estimates[c] or 0.0), c.workers, c.threads, c.stack)) + \
        sorted(c for c in last if estimates[c] is None)
    top = order[0] if scored else None
    top_stage = last[top] if top is not None else -1
    ranked = []
    for position, config in enumerate(order, start=1):
        m = row_of[config]
        beside = top is not None and last[config] == top_stage and outcomes[top_stage].best == top
        to_best = None if top is None or estimates[config] is None else (estimates[config] or 0.0) / (estimates[top] or 1.0)
        tied = config == top or (beside and m.tied)
        ranked.append(Ranked(position, m, outcomes[last[config]].stage.name, to_best,
                             m.vs_best if beside else None, tied, beside))
    return tuple(ranked)


def _rank_capacity(outcomes: Sequence[StageOutcome], last: Mapping[Config, int],
                   row_of: Mapping[Config, Measured]) -> tuple[Ranked, ...]:
    """On each candidate's own last capacity; tied where its bracket reaches past the top's rate."""
    scored = [c for c in last if row_of[c].value is not None]
    order = sorted(scored, key=lambda c: (-(row_of[c].value or 0.0), c.workers, c.threads, c.stack)) + \
        sorted(c for c in last if row_of[c].value is None)
    top_value = row_of[order[0]].value if scored else None
    top_stage = last[order[0]] if scored else -1
    ranked = []
    for position, config in enumerate(order, start=1):
        m = row_of[config]
        cap = m.capacity
        ceiling = math.inf if cap is None or cap.failed_at is None else cap.failed_at
        tied = m.value is not None and top_value is not None and (position == 1 or ceiling > top_value)
        to_best = None if m.value is None or not top_value else m.value / top_value
        ranked.append(Ranked(position, m, outcomes[last[config]].stage.name, to_best, None, tied,
                             scored != [] and last[config] == top_stage))
    return tuple(ranked)


def unrepeated(outcomes: Sequence[StageOutcome]) -> tuple[str, ...]:
    """Candidates whose capacity, measured in two stages, gave brackets that do not overlap."""
    seen: dict[Config, list[tuple[str, float, float]]] = {}
    for outcome in outcomes:
        for m in outcome.rows:
            cap = m.capacity
            if cap is not None and cap.rate is not None:
                high = math.inf if cap.failed_at is None else cap.failed_at
                seen.setdefault(m.config, []).append((outcome.stage.name, cap.rate, high))
    found = []
    for config, spans in seen.items():
        for (stage_a, low_a, high_a), (stage_b, low_b, high_b) in zip(spans, spans[1:]):
            if high_a <= low_b or high_b <= low_a:
                found.append(f"{config.label}'s capacity did not repeat: [{low_a:,.0f}, {high_a:,.0f}) in "
                             f"{stage_a}, [{low_b:,.0f}, {high_b:,.0f}) in {stage_b}; read gaps that small as noise")
    return tuple(found)


@dataclass(frozen=True)
class Tuning:
    """The answer of a tuning run, as the report renders it and tuning.json keeps it."""

    objective: str
    """throughput, or the objective's text (p99<100ms): capacity under it."""
    workload: str
    bounds: tuple[str, ...]
    """The search's bound per class, in words."""
    ranked: tuple[Ranked, ...]
    stages: tuple[tuple[str, str, int], ...]
    """(class stack, stage name, candidates) in the order run."""
    not_measured: tuple[tuple[str, str], ...] = ()
    """(candidate label, why): planned but never measured (the budget ran out)."""
    deploy: tuple[tuple[str, str], ...] = ()
    """(candidate label, command) for the best and its ties."""
    resources: tuple[tuple[str, str], ...] = ()
    """(candidate label, Kubernetes `resources:` block) beside its command, under a --cpu-quota."""
    pods: tuple[tuple[str, str], ...] = ()
    """(candidate label, the pods --target-rate needs at its capacity, with the bracket's)."""
    budget_s: float | None = None
    notes: tuple[str, ...] = ()

    @property
    def capacity(self) -> bool:
        return self.objective != "throughput"

    @property
    def best(self) -> Ranked | None:
        return self.ranked[0] if self.ranked and self.ranked[0].measured.value is not None else None

    @property
    def cut_short(self) -> tuple[tuple[str, str], ...]:
        """(label, why) of every candidate whose measuring ended early or never began."""
        return tuple((r.config.label, r.measured.cut_short) for r in self.ranked
                     if r.measured.cut_short) + self.not_measured


def deployment_sizing(ranked: tuple[Ranked, ...], deployed: set[str], cpu_quota: float | None,
                      target_rate: float | None) -> dict[str, tuple[tuple[str, str], ...]]:
    """Tuning's `resources` and `pods` for the configurations offered to deploy: as measured
    (the quota, the memory high-water mark with headroom) and for --target-rate at each capacity."""
    chosen = [r for r in ranked if r.config.label in deployed]
    resources = tuple((r.config.label, kubernetes_resources(cpu_quota, r.measured.rss_mb)) for r in chosen) \
        if cpu_quota is not None else ()
    pods = tuple((r.config.label, pods_needed(target_rate, r.measured.value, r.measured.interval)) for r in chosen
                 if target_rate is not None and r.measured.value)
    return {"resources": resources, "pods": pods}


_converter = cattrs.Converter()


def tuning_of(results: ResultSet) -> Tuning | None:
    """The tuning answer a run recorded, as the engine returned it; None for other runs."""
    if results.tuning is None:
        return None
    try:
        return _converter.structure(results.tuning, Tuning)
    except (cattrs.BaseValidationError, TypeError, ValueError) as exc:
        raise UserError(f"the results' tuning record does not read as a tuning answer: {exc}") from None
