"""GeneratorCeiling with the real wrk (and ab) against the real nginx it starts: the success path."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import psutil
import pytest

from pywebbench.analyze.rows import recorded_ceilings
from pywebbench.measure.ceiling import NO_CEILING, CeilingReading, GeneratorCeiling, ceiling_seconds
from pywebbench.loadgen.registry import make_generator
from pywebbench.measure.machine import usable_cpus
from pywebbench.results.model import ResultSet, ServiceRecord, TrialSpec
from support.builders import header

CPUS = usable_cpus()
# Stack and generator on CPUs of their own where the machine has two; else both unpinned.
STACK_CPUS, LOADGEN_CPUS = ((CPUS[1],), (CPUS[0],)) if len(CPUS) >= 2 else ((), ())
RECORD_KEYS = {"generator", "protocol", "connections", "rps", "errors", "nginx_workers", "stack_cpus", "loadgen_cpus",
               "requests", "window_s"}


def _spec(connections: int = 4, **changes: object) -> TrialSpec:
    spec = TrialSpec("r1-x-hello", "flask:gunicorn-sync", "hello", connections, 1.0, 0.0, 1, "wrk",
                     stack_cpus=STACK_CPUS, loadgen_cpus=LOADGEN_CPUS)
    return replace(spec, **changes)  # type: ignore[arg-type]


@dataclass
class Measured:
    ceiling: GeneratorCeiling
    records: list[ServiceRecord] = field(default_factory=list)
    seconds: list[float] = field(default_factory=list)
    returned: dict[str, CeilingReading] = field(default_factory=dict)

    def rps(self, name: str) -> float:
        reading = self.returned[name]
        assert reading.problem is None and reading.rps is not None, reading
        return reading.rps


@pytest.fixture(scope="module")
def wrk_ceiling(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    """Calls made as a run makes them: two trials at 4 connections, one at 2, one open-loop."""
    measured = Measured(GeneratorCeiling(make_generator("wrk"), tmp_path_factory.mktemp("ceiling"), timeout_s=2.0))
    measured.ceiling.on_record = measured.records.append
    measured.ceiling.on_seconds = measured.seconds.append
    measured.returned["c4"] = measured.ceiling(_spec(4))
    measured.returned["c4 again"] = measured.ceiling(_spec(4, trial_id="r2-x-hello", round=2, workload="json"))
    measured.returned["c2"] = measured.ceiling(_spec(2))
    measured.returned["open loop"] = measured.ceiling(_spec(4, rate=500.0))
    return measured


def test_the_ceiling_is_a_positive_rate_wrk_reached_against_nginx(wrk_ceiling: Measured) -> None:
    c4 = wrk_ceiling.rps("c4")
    assert c4 > 100.0  # nginx static on loopback: far above 100 req/s even on one CPU
    record = wrk_ceiling.records[0]
    assert record.name == "generator-ceiling"
    assert record.version.startswith("nginx version:")
    assert set(record.config) == RECORD_KEYS
    assert (record.config["generator"], record.config["protocol"]) == ("wrk", "h1")
    assert record.config["connections"] == 4
    assert record.config["rps"] == round(c4, 1)
    assert record.config["errors"] == 0
    assert record.config["nginx_workers"] == max(1, len(STACK_CPUS))
    assert record.config["stack_cpus"] == list(STACK_CPUS)
    assert record.config["loadgen_cpus"] == list(LOADGEN_CPUS)
    assert record.config["window_s"] == ceiling_seconds(_spec(4))[1] == 1.0  # the trial's own window


def test_it_is_measured_once_per_setting(wrk_ceiling: Measured) -> None:
    # Another trial with the same connections and CPUs (another workload, round) reuses the figure.
    assert wrk_ceiling.returned["c4 again"] == wrk_ceiling.returned["c4"]
    # Two settings measured, two records, two timings: the repeat cost nothing.
    assert [r.config["connections"] for r in wrk_ceiling.records] == [4, 2]
    assert len(wrk_ceiling.seconds) == 2
    assert all(s >= sum(ceiling_seconds(_spec(4))) for s in wrk_ceiling.seconds)  # each paid the warmup and the window
    assert wrk_ceiling.rps("c2") > 0


def test_open_loop_has_no_ceiling_and_measures_nothing(wrk_ceiling: Measured) -> None:
    assert wrk_ceiling.returned["open loop"] == NO_CEILING
    assert all(r.config["connections"] in (4, 2) for r in wrk_ceiling.records) and len(wrk_ceiling.records) == 2


def test_no_nginx_is_left_after_the_measurements(wrk_ceiling: Measured) -> None:
    work_dir = str(wrk_ceiling.ceiling.work_dir)
    left = [p.pid for p in psutil.process_iter(["cmdline"]) if work_dir in " ".join(p.info["cmdline"] or [])]
    assert left == []


def test_the_report_reads_back_the_ceiling_each_trial_was_checked_against(wrk_ceiling: Measured) -> None:
    results = ResultSet(header(), (), services=tuple(wrk_ceiling.records))
    # keyed as the trials look it up; the figure as stored, to 0.1 req/s
    assert recorded_ceilings(results) == {
        (4, LOADGEN_CPUS, STACK_CPUS, None, "h1"): pytest.approx(wrk_ceiling.rps("c4"), abs=0.05),
        (2, LOADGEN_CPUS, STACK_CPUS, None, "h1"): pytest.approx(wrk_ceiling.rps("c2"), abs=0.05),
    }


@pytest.fixture(scope="module")
def ab_ceiling(tmp_path_factory: pytest.TempPathFactory) -> Measured:
    """ab runs to a count, so the request count is part of the setting: the run-time key has it."""
    measured = Measured(GeneratorCeiling(make_generator("ab"), tmp_path_factory.mktemp("ab-ceiling"), timeout_s=2.0))
    measured.ceiling.on_record = measured.records.append
    measured.returned["200"] = measured.ceiling(_spec(2, generator="ab", requests=200))
    measured.returned["2000"] = measured.ceiling(_spec(2, generator="ab", requests=2000))
    return measured


def test_ab_ceilings_differing_only_in_request_count_are_measured_apart(ab_ceiling: Measured) -> None:
    assert [r.config["generator"] for r in ab_ceiling.records] == ["ab", "ab"]
    assert ab_ceiling.rps("200") > 0 and ab_ceiling.rps("2000") > 0


def test_the_report_tells_apart_ceilings_that_differ_only_in_request_count(ab_ceiling: Measured) -> None:
    results = ResultSet(header(), (), services=tuple(ab_ceiling.records))
    assert len(recorded_ceilings(results)) == len(ab_ceiling.records) == 2
