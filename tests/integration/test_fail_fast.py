"""An app that answers wrongly on its only server: one launch, no relaunch for the later rounds,
one error line naming the answer check, exit 2."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from pywebbench.results.model import TrialStatus
from pywebbench.results.store import load_results
from .conftest import pywebbench


def test_a_wrong_answer_on_the_only_server_stops_after_the_first_launch(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "wrong.py").write_text(textwrap.dedent('''
        def app(environ, start_response):
            start_response("500 Internal Server Error", [("Content-Type", "text/plain")])
            return [b"oops"]
    '''))
    out = tmp_path / "run"
    # The default 5 rounds at 3 per launch would be two launches and ten windows' wait.
    done = pywebbench("app", "--app", "wrong:app", "--app-dir", str(tmp_path / "app"), "--server", "gunicorn-sync",
                      "--duration", "2", "--warmup", "0.5", "--out", str(out), timeout=300)
    errors = [line for line in done.stderr.splitlines() if line.startswith("pywebbench: error:")]
    assert done.returncode == 2, done.stderr[-3000:]
    assert len(errors) == 1 and "GET /: status 500, expected 200" in errors[0], done.stderr[-3000:]
    assert "0 rounds in 1 launch(es); stopped: wrong-answers" in done.stderr
    trials = load_results(out).trials
    assert [(t.status, t.spec.round, t.spec.launch, t.load) for t in trials] == [
        (TrialStatus.INVALID_RESPONSE, 1, 1, None)]
    wall = re.search(r"wall time (\d+)s", done.stderr)
    assert wall is not None and int(wall.group(1)) < 30, done.stderr[-3000:]  # no second launch, no windows
