"""Validity checks: each fires on what it is meant to see, and only then."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from pywebbench.analyze.rows import spread_check
from pywebbench.measure.checks import Check, advice, check_name, trial_checks
from pywebbench.loadgen.base import LoadRequest
from support.fake_loadgen import FakeLoadGenerator, synthetic_result
from pywebbench.plan.options import CpuSplit
from pywebbench.plan.sessions import Plan, Session
from pywebbench.results.model import LoadResult, ResourceUsage, SocketErrors, TrialResult, TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter, results_path
from pywebbench.measure.runner import LaunchLimits, Runner
from pywebbench.measure.roles import LoadTools
from pywebbench.catalog.workloads import HELLO
from support.builders import header, stack, trial
from support.fakes import CurrentPythonBuilder, stdlib_stack
pytestmark = pytest.mark.serial  # reads CPU time or waits on the clock: never beside a test worker



def _trial(load: LoadResult, *, connections: int = 10, resources: tuple[ResourceUsage, ...] = (),
           loadgen_cpus: tuple[int, ...] = (0,)) -> TrialResult:
    spec = TrialSpec("t", "flask:gunicorn-sync", "hello", connections, load.duration_s, 0.0, 1, "fake",
                     loadgen_cpus=loadgen_cpus)
    return TrialResult(spec, stack("flask:gunicorn-sync"), TrialStatus.OK, "", "", load=load, resources=resources)


def _names(found: tuple[str, ...]) -> set[str]:
    return {check_name(c) for c in found}


def test_a_clean_consistent_trial_passes_every_check() -> None:
    # 1000 req/s x 10 ms mean = 10 in flight = 10 connections: Little's law holds.
    load = synthetic_result(1000.0, 5.0, p50_ms=10.0)
    found = trial_checks(_trial(load, resources=(ResourceUsage("loadgen", 1.0, 5.0, 1, 5.0),)), 20_000.0)
    assert found == ()


def test_each_problem_is_named_with_what_was_seen() -> None:
    load = synthetic_result(1000.0, 5.0, p50_ms=10.0, socket_errors=SocketErrors(timeout=3), non_2xx=2)
    busy = (ResourceUsage("loadgen", 4.9, 5.0, 1, 5.0), ResourceUsage("other", 2.0, 0.0, 0, 5.0))
    found = trial_checks(_trial(load, connections=40, resources=busy), 1100.0)
    assert _names(found) == {Check.GENERATOR_SATURATED, Check.NEAR_CEILING, Check.ERRORS, Check.LITTLES_LAW,
                             Check.BUSY_MACHINE}
    text = " | ".join(found)
    assert "98% of 1 CPU" in text and "91% of the 1,100 req/s" in text and "timeout 3" in text
    assert "10.0 in flight, but 40 connections" in text and "40% of a core" in text
    assert all(advice(c) for c in found)


def test_open_loop_checks_the_rate_not_littles_law() -> None:
    load = replace(synthetic_result(800.0, 5.0, p50_ms=500.0), rate=1000.0)
    found = trial_checks(_trial(load), None)
    assert _names(found) == {Check.RATE_NOT_REACHED}
    assert "800 of 1,000 req/s" in found[0]


def test_no_request_at_all_is_an_error_not_a_valid_zero() -> None:
    load = synthetic_result(0.0, 1.0)
    trial = _trial(load)
    assert not trial.valid
    assert _names(trial_checks(trial, None)) == {Check.ERRORS}


def test_spread_check_uses_the_interval_half_width() -> None:
    assert spread_check((95.0, 105.0), 100.0, 3) is None
    wide = spread_check((80.0, 120.0), 100.0, 3)
    assert wide is not None and wide.startswith("spread: 95% interval ±20% over 3 repeats")
    assert spread_check(None, 100.0, 1) is None


def _burn_a_cpu(request: LoadRequest) -> LoadResult:
    """A fake generator that saturates its CPU for real: three spinning children against its one CPU.

    Not pinned: on a quiet 2-core machine they use both cores, about twice the 90% of one
    core the check looks for, which leaves room for neighbours and for start-up time.
    """
    spin = "import time\nend = time.monotonic() + 2.0\nwhile time.monotonic() < end: pass"
    children = [subprocess.Popen([sys.executable, "-c", spin]) for _ in range(3)]
    for child in children:
        child.wait()
    return synthetic_result(1000.0, request.duration_s)


def test_a_generator_that_saturates_its_cpu_is_flagged_by_the_real_sampler(tmp_path: Path) -> None:
    server = stdlib_stack("ok")
    spec = TrialSpec("t-sat", server.id, "hello", 10, 1.0, 0.0, 1, "fake", 1, 1, loadgen_cpus=(0,))
    plan = Plan((Session(server, 1, 1, 1, (spec,), (HELLO,)),), (), CpuSplit((), (0,)), 0)
    writer = ResultsWriter(results_path(tmp_path), header())
    runner = Runner(run_dir=tmp_path, writer=writer, tools=LoadTools(FakeLoadGenerator(_burn_a_cpu)),
                    builder=CurrentPythonBuilder(), python="python3", limits=LaunchLimits(ready_timeout_s=10))
    runner.run(plan)
    writer.close()
    trial = runner.results[0]
    generator = trial.usage("loadgen")
    assert generator is not None and generator.cpu_s > 1.0
    assert Check.GENERATOR_SATURATED in _names(trial.checks), (generator, trial.checks)
    assert trial.sampler_cpu_s is not None and trial.load_average is not None


def test_a_stack_sharing_the_generator_s_cpu_is_flagged() -> None:
    from dataclasses import replace as _replace

    base = trial("flask:gunicorn-sync", 1000.0)
    shared = _replace(base, spec=_replace(base.spec, stack_cpus=(0,), loadgen_cpus=(0,)))
    assert any(c.startswith("cpu-overlap: stack and generator both ran on CPU 0") for c in trial_checks(shared, None))
    apart = _replace(base, spec=_replace(base.spec, stack_cpus=(1,), loadgen_cpus=(0,)))
    assert not any(c.startswith("cpu-overlap") for c in trial_checks(apart, None))
