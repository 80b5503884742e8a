"""Small constructors of result values for tests."""

from __future__ import annotations

from support.fake_loadgen import synthetic_result
from pywebbench.results.model import (
    LoadResult,
    MachineInfo,
    RunHeader,
    StackInfo,
    TrialResult,
    TrialSpec,
    TrialStatus,
)


def header() -> RunHeader:
    machine = MachineInfo("host", "Test CPU", 2, (0, 1), 1024, "6.1", "Debian", "3.11.7", (0.1, 0.2, 0.3), None)
    return RunHeader("run1", "2026-11-21T00:00:00+00:00", "0.1.0", ("pywebbench", "run"),
                     {"connections": 100}, machine, {"generator": "fake"})


def stack(stack_id: str, concurrency: str = "Sync") -> StackInfo:
    framework, _, server = stack_id.partition(":")
    return StackInfo(stack_id, framework, framework.title(), server.split("-")[0], server.title(),
                     server.partition("-")[2], "sync", "WSGI", concurrency, "-", "-", 3, 1)


def trial(
    stack_id: str,
    rps: float,
    *,
    workload: str = "hello",
    connections: int = 100,
    round_no: int = 1,
    status: TrialStatus = TrialStatus.OK,
    load: LoadResult | None = None,
    p50_ms: float = 10.0,
) -> TrialResult:
    spec = TrialSpec(f"r{round_no}-{stack_id}-{workload}", stack_id, workload, connections, 2.0, 1.0,
                     round_no, "fake", 3, 1, (1,), (0,))
    return TrialResult(spec, stack(stack_id), status, "2026-11-21T00:00:00+00:00", "2026-11-21T00:00:03+00:00",
                       load=load or synthetic_result(rps, 2.0, p50_ms=p50_ms), keepalive=True)
