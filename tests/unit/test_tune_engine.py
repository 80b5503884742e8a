"""The tuning engine end to end on real (stdlib) servers and the fake generator: stages as
interleaved rounds, the throughput ties, and the SLO objective on a fake latency curve
through the real capacity-search loop, every probe a recorded trial."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from pywebbench.analyze.tuning import Tuning
from pywebbench.catalog.registry import build_catalog
from pywebbench.loadgen.base import LoadRequest
from pywebbench.measure.round_plan import Budget
from pywebbench.measure.runner import LaunchLimits, Runner
from pywebbench.measure.roles import LoadTools
from pywebbench.plan.options import RunOptions
from pywebbench.plan.slo import parse_slo
from pywebbench.results.model import LoadResult
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.jobs.tune import TuneRequest, tune
from support.builders import header
from support.fake_loadgen import FakeLoadGenerator, synthetic_result
from support.fakes import CurrentPythonBuilder, stdlib_stack

pytestmark = pytest.mark.usefixtures("short_quiet_samples")

THROUGHPUT = {1: 500.0, 2: 1000.0, 3: 1004.0}
"""req/s by workers: 2 and 3 cannot be told apart, 1 is half."""
CAPACITY = {1: 300.0, 2: 700.0, 3: 720.0}
"""req/s each worker count keeps up with before it queues."""


def _workers(request: LoadRequest) -> int:
    found = re.search(r"#w(\d+)t(\d+)", request.label)
    assert found is not None, request.label
    return int(found.group(1))


def _respond(rng: random.Random) -> FakeLoadGenerator:
    def respond(request: LoadRequest) -> LoadResult:
        workers = _workers(request)
        if request.rate is None:
            return synthetic_result(THROUGHPUT[workers] * rng.gauss(1.0, 0.01), request.duration_s)
        over = max(0.0, request.rate - CAPACITY[workers])
        p99 = 8.0 + over * 2.0  # queues past capacity: 100 ms at capacity + 46 req/s
        return synthetic_result(request.rate, request.duration_s, p50_ms=p99 / 1.98)
    return FakeLoadGenerator(respond=respond)


def _run(tmp_path: Path, slo: str | None) -> tuple[Tuning, Runner]:
    writer = ResultsWriter(results_path(tmp_path), header())
    runner = Runner(run_dir=tmp_path, writer=writer,
                    tools=LoadTools(_respond(random.Random(7)), settle=lambda request, seconds, work_dir: None),
                    builder=CurrentPythonBuilder(), python="python3", limits=LaunchLimits(ready_timeout_s=10))
    stack = stdlib_stack("ok", "hello")
    options = RunOptions(stacks=(stack.id,), duration_s=0.2, warmup_s=0.0, settle_s=0.0, repeats=6,
                         rounds_per_launch=2, generator="fake", seed=3)
    request = TuneRequest((stack,), "hello", parse_slo(slo) if slo else None)
    try:
        tuning = tune(runner, build_catalog(), request, options, Budget(None), stack_cpus=1, seed=3)
    finally:
        writer.finish("complete")
        writer.close()
    return tuning, runner


def test_throughput_tuning_ranks_with_paired_ties_and_a_deploy_line(tmp_path: Path) -> None:
    tuning, runner = _run(tmp_path, None)
    assert tuning.stages == ((tuning.ranked[0].config.stack, "workers", 3),)  # 1, 2, 3: nothing to refine
    ranked = {r.config.workers: r for r in tuning.ranked}
    assert tuning.ranked[0].config.workers in (2, 3)
    assert ranked[2].tied and ranked[3].tied and not ranked[1].tied
    assert ranked[1].vs_best is not None and ranked[1].vs_best.high < 0.6
    assert all(r.measured.rounds == 6 and r.measured.rss_mb is not None for r in tuning.ranked)
    assert len(tuning.deploy) == 2 and all("--port 8000" in command for _, command in tuning.deploy)
    trials = load_results(tmp_path).trials
    assert len(trials) == 18 and {t.spec.alias for t in trials} == {"w1t1", "w2t1", "w3t1"}
    assert {t.spec.workers for t in trials} == {1, 2, 3} and all(t.spec.method == "interleaved" for t in trials)
    assert {t.spec.launch for t in trials} == {1, 2, 3}  # six rounds, two per launch


def test_the_slo_objective_is_searched_per_candidate_and_every_probe_is_a_trial(tmp_path: Path) -> None:
    tuning, runner = _run(tmp_path, "p99<100ms")
    assert tuning.capacity
    by_workers = {r.config.workers: r for r in tuning.ranked}
    for workers, row in by_workers.items():
        m = row.measured
        assert m.capacity is not None and m.capacity.stopped == "resolved"
        assert m.interval is not None and m.interval[0] <= CAPACITY[workers] + 46 < m.interval[1]
    assert tuning.ranked[0].config.workers in (2, 3)
    assert by_workers[2].tied and by_workers[3].tied and not by_workers[1].tied
    trials = load_results(tmp_path).trials
    probes = sum(len(r.measured.capacity.probes) for r in tuning.ranked if r.measured.capacity)
    assert len(trials) == probes and all(t.spec.rate is not None for t in trials)
    # interleaved: a round holds one probe of every candidate still searching
    rounds = {t.spec.round for t in trials}
    assert max(len([t for t in trials if t.spec.round == r]) for r in rounds) == 3
    assert tuning.cut_short == ()
