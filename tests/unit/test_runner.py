"""The runner end to end with a real (stdlib) server process and the fake generator."""

from __future__ import annotations

import os
from pathlib import Path

import psutil
import pytest

from pywebbench.loadgen.base import LoadRequest
from support.fake_loadgen import FakeLoadGenerator
from pywebbench.plan.sessions import Plan, Session
from pywebbench.plan.options import CpuSplit
from pywebbench.results.model import TrialSpec, TrialStatus
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.measure.runner import LaunchLimits, Runner
from pywebbench.measure.roles import LoadTools
from pywebbench.catalog.workloads import HELLO
from support.builders import header
from support.fakes import CurrentPythonBuilder, stdlib_stack

pytestmark = pytest.mark.usefixtures("short_quiet_samples")


def _plan(*modes: str) -> Plan:
    sessions = []
    for mode in modes:
        stack = stdlib_stack(mode)
        spec = TrialSpec(f"t-{mode}", stack.id, "hello", 10, 1.0, 0.5, 1, "fake", 1, 1)
        sessions.append(Session(stack, 1, 1, 1, (spec,), (HELLO,)))
    return Plan(tuple(sessions), (), CpuSplit((), ()), 0)


class _Warmups:
    """Records the discarded load (warmups are timed like settles) instead of running wrk."""

    def __init__(self) -> None:
        self.urls: list[str] = []

    def __call__(self, request: LoadRequest, seconds: float, work_dir: Path) -> None:
        self.urls.append(request.url)


def _run(tmp_path: Path, plan: Plan) -> tuple[Runner, FakeLoadGenerator, _Warmups]:
    generator = FakeLoadGenerator()
    warmups = _Warmups()
    writer = ResultsWriter(results_path(tmp_path), header())
    runner = Runner(run_dir=tmp_path, writer=writer, tools=LoadTools(generator, settle=warmups),
                    builder=CurrentPythonBuilder(), python="python3", limits=LaunchLimits(ready_timeout_s=10))
    runner.run(plan)
    writer.finish("complete")
    writer.close()
    return runner, generator, warmups


def test_good_bad_and_dying_servers_each_end_as_they_should(tmp_path: Path) -> None:
    runner, generator, warmups = _run(tmp_path, _plan("ok", "wrong", "die", "ok"))
    statuses = [t.status for t in load_results(tmp_path).trials]
    assert statuses == [TrialStatus.OK, TrialStatus.INVALID_RESPONSE, TrialStatus.SERVER_FAILED, TrialStatus.OK]
    wrong, died = runner.results[1], runner.results[2]
    assert wrong.error and "body" in wrong.error and wrong.load is None
    assert died.error and "boom: cannot import the app" in died.error
    # a warmup and a measured window for each of the two good servers; none for the others
    assert len(warmups.urls) == 2
    assert [r.url for r in generator.requests] == warmups.urls
    assert runner.results[0].keepalive is True
    assert runner.results[0].stack.argv[-2:] == ("--mode", "ok")


@pytest.mark.serial  # looks for leftovers machine-wide: a parallel worker's servers would count
def test_whole_process_group_is_gone_after_the_session(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Marked by the TMPDIR the servers' explicit environment passes on (launchers.base_environment):
    # under xdist another worker's test may start its own hello_server.py meanwhile, not ours to stop.
    mark = str(tmp_path / "tmp")
    os.makedirs(mark)
    monkeypatch.setenv("TMPDIR", mark)
    _run(tmp_path, _plan("fork"))

    def ours(process: psutil.Process) -> bool:
        try:
            return process.environ().get("TMPDIR") == mark and process.pid != os.getpid()
        except (psutil.Error, OSError):
            return False
    leftovers = [p for p in psutil.process_iter(["cmdline"])
                 if "hello_server.py" in " ".join(p.info["cmdline"] or []) and ours(p)]
    assert leftovers == []


def test_the_restart_method_stops_after_a_round_in_which_every_answer_was_wrong(tmp_path: Path) -> None:
    stack = stdlib_stack("wrong")
    sessions = tuple(Session(stack, r, 1, 1, (TrialSpec(f"r{r}-wrong", stack.id, "hello", 10, 1.0, 0.5, r, "fake", 1, 1),),
                             (HELLO,)) for r in (1, 2, 3))
    _run(tmp_path, Plan(sessions, (), CpuSplit((), ()), 0))
    assert [t.spec.trial_id for t in load_results(tmp_path).trials] == ["r1-wrong"]  # launched once
