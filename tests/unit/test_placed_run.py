"""Several hosts in `run`: the rtt knob, the refusals before anything starts, the placement lines."""

from __future__ import annotations

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.knobs import knob_labels
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sweep import Knob, grid, parse_knobs, parse_values
from pywebbench.report.common import placement_lines
from pywebbench.results.model import MachineInfo, ResultSet, RunHeader, ServiceRecord, TrialSpec


def test_rtt_is_a_sweepable_knob_in_milliseconds() -> None:
    assert parse_values(Knob.RTT, "0,2ms,5ms") == (0.0, 0.002, 0.005)
    points = grid(parse_knobs(["rtt=0,2ms"]))
    assert [p.overrides() for p in points] == [{"rtt_s": 0.0}, {"rtt_s": 0.002}]
    assert [p.label for p in points] == ["rtt=0", "rtt=2ms"]


def test_rtt_sets_a_trial_apart_and_is_named() -> None:
    spec = TrialSpec("t", "flask:gunicorn-sync", "db", 2, 1.0, 0.0, 1, "wrk", rtt_s=0.002)
    assert "RTT +2 ms per link" in knob_labels(spec)
    from dataclasses import replace
    assert spec.cell != replace(spec, rtt_s=0.0).cell


@pytest.mark.parametrize(("options", "says"), [
    (RunOptions(rtt_s=0.002), "on a single host there are none"),
    (RunOptions(rtt_s=0.002, topology="nginx"), "on a single host there are none"),
    (RunOptions(hosts="h.toml", topology="netns"), "takes --topology direct or nginx"),
    (RunOptions(topology="netns", generator="oha"), "--generator oha is not supported"),
    (RunOptions(hosts="h.toml", method="duet"), "duet is not supported"),
    (RunOptions(topology="netns", rtt_s=-0.001), "must not be negative"),
])
def test_bad_placements_are_one_line_errors(options: RunOptions, says: str) -> None:
    with pytest.raises(UserError, match=says):
        options.validate()


def test_placed_options_pass() -> None:
    assert RunOptions(topology="netns", rtt_s=0.002).validate().placed
    assert RunOptions(hosts="h.toml").validate().placed
    assert not RunOptions().validate().placed


def _results(services: tuple[ServiceRecord, ...]) -> ResultSet:
    header = RunHeader("r", "", "0", (), {}, MachineInfo("", "", 0, (), 0, "", "", "", (0.0, 0.0, 0.0)), {})
    return ResultSet(header, (), services=services)


def test_placement_lines_name_hosts_and_rtt_per_point() -> None:
    placed = ServiceRecord("placement", "netns", {
        "roles": {"generator": ["gen"], "app": ["app"]},
        "hosts": {"gen": {"address": "10.231.1.10", "cpus": 2}, "app": {"address": "10.231.1.11", "cpus": 4}},
        "delay_mechanism": "toxiproxy", "cpu_accounting": "not accounted"})
    links = tuple(ServiceRecord("link app-db", "toxiproxy", {"point": p, "rtt_measured_ms": ms, "proxy_cpu_s": c})
                  for p, ms, c in (("rtt=0ms", 0.4, 0.1), ("rtt=2ms", 2.4, 1.5)))
    lines = placement_lines(_results((placed, *links)))
    assert lines[0] == "Hosts (netns): generator on gen (10.231.1.10, 2 CPUs); app on app (10.231.1.11, 4 CPUs)"
    assert "  measured RTT at rtt=0ms: app-db 0.40 ms" in lines
    assert "  measured RTT at rtt=2ms: app-db 2.40 ms" in lines
    assert lines[-1].endswith("1.50 s")
    assert placement_lines(_results(())) == []


def test_service_knob_sweeps_pass_the_placement_check_on_the_rig_and_rtt_alone_needs_hosts() -> None:
    """upstream_delay and max_db_sessions restart their role on its host at each point (measure/placement.py):
    nothing to refuse; an rtt sweep on one host has no links to delay."""
    from pywebbench.measure.placing import hosts_ready
    options = RunOptions(topology="netns").validate()
    for knob in ("upstream_delay=0.01,0.05", "max_db_sessions=2,4"):
        points = [p.overrides().items() for p in grid(parse_knobs([knob]))]
        assert hosts_ready(options, points) is None  # the rig: no inventory to read
    rtt = [p.overrides().items() for p in grid(parse_knobs(["rtt=0,2ms"]))]
    with pytest.raises(UserError, match="on a single host there are none"):
        hosts_ready(RunOptions().validate(), rtt)