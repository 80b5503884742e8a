"""--profile on a short real run: py-spy on a real server's workers after the measured windows,
its files in the run folder, the split of every sample, and the Go reference said unreadable."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from pathlib import Path

from pywebbench.profile.stacks import expand, read_collapsed
from pywebbench.results.store import load_results

from .conftest import pywebbench


def _at(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp).astimezone(timezone.utc)


def test_a_profiled_run_samples_each_python_stack_after_its_measured_windows(tmp_path: Path) -> None:
    done = pywebbench("run", "--stack", "flask:gunicorn-sync", "--stack", "go:net-http", "--workload", "hello",
                      # one launch of one round: the profile follows it as it followed two
                      "--duration", "1", "--warmup", "0.2", "--settle", "0.1", "--connections", "20", "--workers", "2",
                      "--repeats", "1", "--profile", "--profile-window", "1.5s", "--out", str(tmp_path))
    assert done.returncode == 0, done.stderr[-3000:]
    results = load_results(tmp_path)
    assert {p.spec.duration_s for p in results.profiles} == {1.5}  # --profile-window, not --duration
    by_label = {p.label: p for p in results.profiles}
    assert set(by_label) == {"flask:gunicorn-sync", "go:net-http"}
    assert not any(t.spec.trial_id.endswith(".profile") for t in results.trials)  # no measured figure reads it

    go = by_label["go:net-http"]
    assert go.unreadable is not None and "not Python" in go.unreadable and go.samples == 0
    assert f"profile go:net-http hello: not sampled: {go.unreadable}" in done.stderr + done.stdout

    flask = by_label["flask:gunicorn-sync"]
    assert flask.error is None and flask.unreadable is None, flask.error
    assert flask.samples > 0
    assert sum(count for _name, count in flask.split) == flask.samples  # every sample in one category
    assert dict(flask.split)["server"] > 0 and dict(flask.split)["framework"] > 0
    assert expand(flask.frames, flask.stacks).total == flask.samples

    files = {Path(f).name: tmp_path / f for f in flask.files}
    assert set(files) == {"stacks.txt", "speedscope.json", "flame.svg"}
    assert all(path.stat().st_size > 0 for path in files.values())
    # py-spy's own file holds every sample; the waits it let through are set apart, not counted
    assert read_collapsed(files["stacks.txt"].read_text()).total == flask.samples + flask.idle_samples
    speedscope = json.loads(files["speedscope.json"].read_text())
    assert sum(speedscope["profiles"][0]["weights"]) == flask.samples
    assert ET.parse(files["flame.svg"]).getroot().tag == "{http://www.w3.org/2000/svg}svg"

    # The profiled window lies outside every measured one (theirs are recorded to the second, so
    # their end is at most this late: the profile starts no earlier than that).
    start, end = _at(flask.started_at), _at(flask.finished_at)
    assert start < end
    for trial in results.trials:
        assert end <= _at(trial.started_at) or start >= _at(trial.finished_at), trial.spec.trial_id

    assert flask.load is not None and flask.load.requests > 0
    assert flask.measured_rps is not None and flask.overhead is not None
    assert flask.overhead == flask.load.rps / flask.measured_rps - 1
    print(f"profile overhead (one 1 s window, 2 workers, not a measurement): {flask.overhead:+.1%}")

    page = pywebbench("report", str(tmp_path), "--format", "html", "-o", str(tmp_path / "report.html"))
    assert page.returncode == 0, page.stderr
    html = (tmp_path / "report.html").read_text()
    assert html.count('<details class="flame">') == 2 and "Kernel %" in html
