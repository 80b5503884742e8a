"""Pure parts of the roles on their hosts: the lane's database in the placed DSN, the roles' usage per window."""

from __future__ import annotations

import platform
from pathlib import Path
from typing import cast

import pytest

from pywebbench.catalog.servers import APPS_DIR
from pywebbench.measure.accounting import GroupUsage, usage_between
from pywebbench.measure.placement import HostPlacement, PlacedHost, PlacementConfig, _same_arch
from pywebbench.measure.remote import RemoteLauncher
from pywebbench.stage.ssh import SshConnection, SshError



def test_the_placed_dsn_keeps_the_lane_database_the_local_backing_named(tmp_path: Path) -> None:
    placement = HostPlacement((), tmp_path, PlacementConfig(True, 1000, 2, 0.0, tmp_path / "toxiproxy", db_lanes=3),
                          "netns")
    placement._dsn = "postgresql://bench:secret@10.231.1.12:40001/bench"
    env = placement.app_environment({"PWB_DSN": "postgresql://bench:local@127.0.0.1:6432/bench_lane2",
                                     "PWB_DB_POOL": "0"})
    assert env == {"PWB_DSN": "postgresql://bench:secret@10.231.1.12:40001/bench_lane2", "PWB_DB_POOL": "0"}
    assert placement.app_environment({"PWB_DB_POOL": "0"}) == {"PWB_DB_POOL": "0"}  # no db workload: no DSN added


def test_roles_usage_over_a_window_is_the_difference_at_its_edges() -> None:
    before = {"db": GroupUsage(10.0, 50.0, 5), "upstream": GroupUsage(1.0, 10.0, 1)}
    after = {"db": GroupUsage(10.6, 52.0, 6), "upstream": GroupUsage(1.1, 10.0, 1)}
    used = {u.role: u for u in usage_between(before, after, 2.0)}
    assert round(used["db"].cpu_s, 6) == 0.6 and used["db"].peak_rss_mb == 52.0 and used["db"].processes == 6
    assert round(used["db"].cpu_percent, 6) == 30.0 and round(used["upstream"].cpu_s, 6) == 0.1
    assert usage_between(before, {"db": after["db"]}, 2.0)[0].role == "db"  # a role unread at one edge is left out


def test_the_placed_app_comes_first_and_names_where_its_cpu_was_read() -> None:
    from pywebbench.measure.accounting import cpu_source
    before = {"upstream": GroupUsage(1.0, 10.0, 1), "app": GroupUsage(5.0, 80.0, 3)}
    after = {"upstream": GroupUsage(1.2, 10.0, 1), "app": GroupUsage(6.0, 81.0, 3)}
    assert [u.role for u in usage_between(before, after, 1.0)] == ["app", "upstream"]
    assert cpu_source(after, "cgroup") == "proc over ssh"
    assert cpu_source({"upstream": after["upstream"]}, "cgroup") == "cgroup"  # the app unread: this machine's


def test_the_server_s_argv_and_environment_name_the_staged_paths_on_its_host() -> None:
    launcher = RemoteLauncher(cast(SshConnection, None), "10.0.0.2", "/s/envs/abc/bin/python", "/tmp/run/app",
                              Path("/s/envs/abc"), paths=(("/home/me/.cache/pywebbench/envs/abc", "/s/envs/abc"),
                                                          (str(APPS_DIR), "/s/apps/123")))
    assert launcher.on_host(f"--pythonpath={APPS_DIR}") == "--pythonpath=/s/apps/123"
    assert launcher.on_host("/home/me/.cache/pywebbench/envs/abc/bin/uwsgi") == "/s/envs/abc/bin/uwsgi"
    assert launcher.on_host("app_flask:wsgi") == "app_flask:wsgi"


def test_hosts_of_another_architecture_are_refused_unless_they_only_generate_load() -> None:
    here = platform.machine()
    other = "riscv64" if here != "riscv64" else "x86_64"
    _same_arch({"gen": {"arch": other, "roles": ["generator"]}, "app": {"arch": here, "roles": ["app"]}})
    with pytest.raises(SshError, match=f"db is {other} and this machine {here}"):
        _same_arch({"db": {"arch": other, "roles": ["db"]}})


def test_across_hosts_the_load_is_wrk_on_the_generator_hosts_and_no_ceiling_is_read_here(tmp_path: Path) -> None:
    from pywebbench.measure.ceiling import NO_CEILING
    from pywebbench.measure.placed_load import PlacedGenerator
    from pywebbench.measure.roles import LoadSettings
    from pywebbench.plan.hosts import Role
    from pywebbench.results.model import ServiceRecord, TrialSpec
    from pywebbench.stage.ssh import SshTarget
    from support.fake_loadgen import FakeLoadGenerator
    host = PlacedHost("app", "10.231.1.11", (Role.APP, Role.GENERATOR), SshTarget("10.231.1.11"))
    placement = HostPlacement((host,), tmp_path, PlacementConfig(False, 1000, 2, 0.0, tmp_path / "toxiproxy"), "netns")
    written: list[ServiceRecord] = []
    tools = placement.load_tools(FakeLoadGenerator(), LoadSettings("wrk", True, 5.0, tmp_path, written.append,
                                                                   lambda seconds: None))
    assert isinstance(tools.generator, PlacedGenerator)
    assert tools.ceiling(TrialSpec("t", "a:b", "hello", 10, 1.0, 0.0, 1, "wrk")) is NO_CEILING
    assert [r.name for r in written] == ["placement"]  # the header's placement record, written at once
    assert placement.on_record == written.append  # and the records made later, as fronts close
