"""A role's JSON-lines channel over real SSH (the netns rig): requests answered by id on the
channel that started it, and the role's group stopped on its host when the harness is SIGKILLed
(the channel's watcher, stage/ssh.py, sees the harness's end close)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from pywebbench.stage.netns import SSHD, NetnsRig
from pywebbench.stage.ssh import REMOTE_GRACE_S

pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not os.access(SSHD, os.X_OK),
                                reason="the netns rig needs root and openssh-server")

SRC = Path(__file__).resolve().parents[2] / "src"

_ROLE = """
import os, subprocess
from pywebbench.services.remote_role import Channel, serve
channel = Channel()
worker = subprocess.Popen(["sleep", "600"], stdin=subprocess.DEVNULL)  # in the role's group, deaf to its stdin
serve(channel, {"pid": os.getpid(), "worker": worker.pid},
      {"pid": lambda request: {"pid": os.getpid(), "echo": request["echo"]}})
"""

_HARNESS = """
import json, sys, time
from pathlib import Path
from pywebbench.services.remote_role import ask, wait_ready
from pywebbench.stage.ssh import SshConnection, SshTarget
address, key, known, work = sys.argv[1:5]
target = SshTarget(address, key=Path(key), known_hosts=Path(known), shared_fs=True)
conn = SshConnection(target, Path(work) / "ctl", "role").open()
proc = conn.spawn([sys.executable, "-c", sys.argv[5]], name="role", remote_dir=work + "/role",
                  local_log_dir=Path(work) / "logs", env={"PATH": "/usr/bin:/bin", "PYTHONPATH": sys.argv[6]},
                  channel=True)
ready = wait_ready(proc.receive, 60, "the test role", lambda: "")
answer = ask(proc, "pid", 30, echo="a\\nb")
print(json.dumps({"ready": ready, "answer": answer, "pgid": proc.pgid}), flush=True)
time.sleep(600)
"""


def test_a_role_answers_on_its_channel_and_dies_with_a_killed_harness(tmp_path: Path) -> None:
    with NetnsRig(("db",), tmp_path) as rig:
        host = rig.hosts["db"]
        assert host.target.key is not None and host.target.known_hosts is not None
        harness = subprocess.Popen(
            [sys.executable, "-c", _HARNESS, host.address, str(host.target.key), str(host.target.known_hosts),
             str(tmp_path), _ROLE, str(SRC)], stdout=subprocess.PIPE, text=True, start_new_session=True)
        try:
            assert harness.stdout is not None
            said = json.loads(harness.stdout.readline())
            pid, worker = said["ready"]["pid"], said["ready"]["worker"]
            assert said["answer"]["pid"] == pid and said["answer"]["echo"] == "a\nb" and said["pgid"] == pid
            assert _alive(pid) and _alive(worker)  # the rig shares this machine's process table
            harness.send_signal(signal.SIGKILL)
            harness.wait(10)
            deadline = time.monotonic() + 5 + REMOTE_GRACE_S
            while _alive(pid) or _alive(worker):  # the worker too: the group is stopped, not just the role
                assert time.monotonic() < deadline, "the role's group outlived its harness"
                time.sleep(0.1)
        finally:
            if harness.poll() is None:
                os.killpg(harness.pid, signal.SIGKILL)
                harness.wait(10)
            if harness.stdout is not None:
                harness.stdout.close()


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False
