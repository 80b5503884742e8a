"""A role's JSON lines, both ends, over a real child's pipes (the SSH carrier is the rig's:
tests/integration/test_hosts_*.py): ready, answers by id, a role that dies before ready."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from pywebbench.core.jsonlines import LineReader, encode
from pywebbench.services.remote_role import RoleError, answer, wait_ready

_ROLE = """
import sys
from pywebbench.services.remote_role import Channel, serve
channel = Channel()
print("stray output of a service goes to stderr, not the channel")
serve(channel, {"port": 6432}, {"double": lambda request: {"value": 2 * int(request["n"])}})
"""


@pytest.fixture
def role() -> Iterator[subprocess.Popen[bytes]]:
    child = subprocess.Popen([sys.executable, "-c", _ROLE], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    yield child
    child.kill()
    child.wait(10)
    for pipe in (child.stdin, child.stdout, child.stderr):
        if pipe is not None:
            pipe.close()


def test_a_role_says_ready_answers_by_id_and_ends_with_its_stdin(role: subprocess.Popen[bytes]) -> None:
    assert role.stdin is not None and role.stdout is not None and role.stderr is not None
    reader = LineReader(role.stdout)
    assert wait_ready(reader.message, 20.0, "the test role", lambda: "") == {"port": 6432}
    role.stdin.write(encode({"id": 4, "ask": "double", "n": 21}) + encode({"id": 5, "ask": "nothing"})
                     + b"not json\n")
    role.stdin.flush()
    assert reader.message(10.0) == {"id": 4, "value": 42}
    assert reader.message(10.0) == {"id": 5, "failed": True, "error": "unknown request 'nothing'"}
    unreadable = reader.message(10.0)
    assert unreadable is not None and unreadable["failed"] and unreadable["error"].startswith("unreadable request")
    role.stdin.close()  # the harness has gone: the role unwinds and exits
    assert role.wait(10) == 0
    assert b"stray output" in role.stderr.read()


def test_a_role_that_dies_before_ready_is_one_line_with_its_stderr(tmp_path: Path) -> None:
    err = tmp_path / "role.stderr.log"
    with open(err, "wb") as log:
        child = subprocess.Popen([sys.executable, "-c", "import sys; sys.exit('postgres: could not bind\\nFATAL')"],
                                 stdout=subprocess.PIPE, stderr=log)
    assert child.stdout is not None
    with pytest.raises(RoleError) as raised:
        wait_ready(LineReader(child.stdout).message, 20.0, "the db role on db1", lambda: err.read_text())
    child.wait(10)
    child.stdout.close()
    assert str(raised.value) == "the db role on db1 did not start: postgres: could not bind FATAL"


def test_a_silent_role_is_a_timeout_not_a_hang() -> None:
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"], stdout=subprocess.PIPE)
    assert child.stdout is not None
    try:
        with pytest.raises(RoleError, match="did not start: no ready line"):
            wait_ready(LineReader(child.stdout).message, 0.3, "the upstream role on up1", lambda: "")
    finally:
        child.kill()
        child.wait(10)
        child.stdout.close()


def test_a_handler_s_answer_carries_the_request_s_id() -> None:
    assert answer(encode({"id": 9, "ask": "reset"}), {"reset": lambda r: {"note": "dropped 3 clients"}}) \
        == {"id": 9, "note": "dropped 3 clients"}
