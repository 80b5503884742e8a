"""`run --shards 2` on a fleet of the netns rig's hosts: both shards at once, each over SSH on its
own app and generator host, their ratios chained through the overlap stacks.

The rig's hosts share this machine's CPUs, so the shards' windows overlap in time and disturb
each other: this shows the mechanism (two runs, two shards' hosts, one chained table), not a
speedup, which needs hosts of their own.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import tomli_w

from pywebbench.results.store import load_results
from pywebbench.stage.envs import uv_binary
from pywebbench.stage.netns import SSHD, NetnsRig, namespaces

REPO = Path(__file__).resolve().parents[2]
PYWEBBENCH = [sys.executable, "-m", "pywebbench"]
BASE = "flask:gunicorn-sync"
OVERLAP = ("falcon:gunicorn-sync", "bottle:gunicorn-sync")
BLOCKS = ("django:gunicorn-sync", "starlette:uvicorn")

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK),
                                reason="the netns rig needs root and openssh-server")


def _fleet(rig: NetnsRig, path: Path) -> None:
    roles = {"gen1": ("generator",), "app1": ("app",), "gen2": ("generator",), "app2": ("app",)}
    data = tomllib.loads(rig.inventory_toml(roles, uv=uv_binary()))
    for name, table in data["hosts"].items():
        table["shard"] = int(name[-1])
    path.write_text(tomli_w.dumps(data))


def test_two_shards_run_at_once_and_chain_through_the_overlap_stacks(tmp_path: Path) -> None:
    before = set(namespaces())
    with NetnsRig(("gen1", "app1", "gen2", "app2"), tmp_path / "made") as rig:
        fleet = tmp_path / "fleet.toml"
        _fleet(rig, fleet)
        out = tmp_path / "run"
        stacks = [a for s in (BASE, *OVERLAP, *BLOCKS) for a in ("--stack", s)]
        done = subprocess.run([*PYWEBBENCH, "run", "--shards", "2", "--hosts", str(fleet), *stacks,
                               "--workload", "hello", "--duration", "1", "--warmup", "0.25", "--settle", "0.25",
                               "--workers", "1", "--connections", "8",
                               "--repeats", "3", "--rounds-per-launch", "1", "--out", str(out)],
                              capture_output=True, text=True, cwd=REPO, timeout=600)
        assert done.returncode in (0, 1), done.stderr[-3000:]
    for number, own in ((1, BLOCKS[0]), (2, BLOCKS[1])):
        results = load_results(out / f"shard-{number}")
        assert results.complete
        assert {t.spec.stack_id for t in results.trials} == {BASE, *OVERLAP, own}
        placed = next(s for s in results.services if s.name == "placement")
        assert placed.version == "hosts" and placed.config["roles"]["app"] == [f"app{number}"]
        assert {t.spec.launch for t in results.trials} == {1, 2, 3}
    merged = json.loads((out / "shards.json").read_text())
    assert merged["schema_version"] == 1 and merged["plan"]["overlap"] == sorted(OVERLAP)
    (cell,) = merged["cells"]
    assert cell["host"]["df"] == 2 and cell["host"]["variance"] is not None
    assert [r["stack"] for r in cell["agreement"]] == sorted(OVERLAP)
    rows = {r["stack"]: r for r in cell["rows"]}
    assert set(rows) == {BASE, *OVERLAP, *BLOCKS}
    assert rows[BLOCKS[0]]["shards"] == [1] and rows[BLOCKS[1]]["shards"] == [2]
    for stack in (*OVERLAP, *BLOCKS):
        interval = rows[stack]["interval"]
        assert interval is not None and interval["low"] < interval["center"] < interval["high"], (stack, rows[stack])
    assert "The hosts' agreement on the overlap stacks" in done.stdout and "shard 2" in done.stdout
    assert set(namespaces()) <= before  # each shard's run and the rig left nothing behind
