"""Pure parts of the roles on their hosts: the lane's database in the placed DSN, the roles' usage per window."""

from __future__ import annotations

from pathlib import Path

from pywebbench.measure.launchers import GroupUsage
from pywebbench.measure.placement import Placement, PlacementConfig
from pywebbench.measure.window import _remote_roles


def test_the_placed_dsn_keeps_the_lane_database_the_local_backing_named(tmp_path: Path) -> None:
    placement = Placement((), tmp_path, PlacementConfig(True, 1000, 2, 0.0, tmp_path / "toxiproxy", db_lanes=3),
                          "netns")
    placement._dsn = "postgresql://bench:secret@10.231.1.12:40001/bench"
    env = placement.app_environment({"PWB_DSN": "postgresql://bench:local@127.0.0.1:6432/bench_lane2",
                                     "PWB_DB_POOL": "0"})
    assert env == {"PWB_DSN": "postgresql://bench:secret@10.231.1.12:40001/bench_lane2", "PWB_DB_POOL": "0"}
    assert placement.app_environment({"PWB_DB_POOL": "0"}) == {"PWB_DB_POOL": "0"}  # no db workload: no DSN added


def test_roles_usage_over_a_window_is_the_difference_at_its_edges() -> None:
    before = {"db": GroupUsage(10.0, 50.0, 5), "upstream": GroupUsage(1.0, 10.0, 1)}
    after = {"db": GroupUsage(10.6, 52.0, 6), "upstream": GroupUsage(1.1, 10.0, 1)}
    used = {u.role: u for u in _remote_roles(before, after, 2.0)}
    assert round(used["db"].cpu_s, 6) == 0.6 and used["db"].peak_rss_mb == 52.0 and used["db"].processes == 6
    assert round(used["db"].cpu_percent, 6) == 30.0 and round(used["upstream"].cpu_s, 6) == 0.1
    assert _remote_roles(before, {"db": after["db"]}, 2.0)[0].role == "db"  # a role unread at one edge is left out
