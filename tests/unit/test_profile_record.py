"""A profiled window in the results file: its own record kind, kept apart from the trials, read
back whole; files without it still load; a record pointing past its frames is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pywebbench.analyze.rows import summarize
from pywebbench.core.errors import UserError
from pywebbench.measure.profiled import describe
from pywebbench.profile.stacks import expand
from pywebbench.results.model import ProfileRecord
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, trial
from support.profiles import profile


def test_a_profile_reads_back_whole_and_no_statistic_sees_its_window(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    measured = trial("flask:gunicorn-sync", 1000.0)
    writer.add_trial(measured)
    writer.add_profile(profile())
    writer.finish("complete")
    writer.close()
    loaded = load_results(tmp_path)
    assert loaded.profiles == (profile(),)
    assert loaded.trials == (measured,)  # the profiled window is no trial
    (row,) = summarize(loaded).rows
    assert row.rps == pytest.approx(1000.0)  # not pulled towards the profiled 900
    assert expand(loaded.profiles[0].frames, loaded.profiles[0].stacks).total == 100


def test_a_file_from_before_profiles_still_loads(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_trial(trial("flask:gunicorn-sync", 1000.0))
    writer.close()
    assert load_results(tmp_path).profiles == ()


def test_a_stack_pointing_past_its_frames_is_a_bad_record(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    writer.add_profile(profile())
    writer.close()
    path = results_path(tmp_path)
    lines = path.read_text().splitlines()
    record = json.loads(lines[1])
    record["stacks"][0][0] = [0, 99]
    path.write_text("\n".join([lines[0], json.dumps(record)]) + "\n")
    with pytest.raises(UserError, match="record 2 is not a valid profile record"):
        load_results(tmp_path)


def test_the_terminal_line_gives_the_split_and_the_overhead() -> None:
    assert describe(profile()) == ("profile flask:gunicorn-sync hello: 100 samples on the CPU (kernel 40%, server 0%, "
                                   "framework 0%, app 60%, rest 0%); 900 req/s sampled against 1,000 measured (-10.0%)")
    assert describe(profile(), "connections=10").startswith("profile flask:gunicorn-sync hello at connections=10: ")
    go = ProfileRecord(profile("go:net-http").spec, "t0", "t1", unreadable="its server is not Python (go-reference)")
    assert describe(go) == "profile go:net-http hello: not sampled: its server is not Python (go-reference)"
