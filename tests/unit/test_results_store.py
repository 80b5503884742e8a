from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from support.fake_loadgen import synthetic_result
from pywebbench.results.model import EnvironmentRecord, TrialStatus
from pywebbench.results.store import ResultsWriter, load_results, results_path
from support.builders import header, trial


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    writer = ResultsWriter(results_path(tmp_path), header())
    env = EnvironmentRecord("abc", "CPython 3.11.7", ("flask==3.1.3",), (), ("flask==3.1.3", "werkzeug==3.1.9"))
    writer.add_environment(env)
    first = trial("flask:gunicorn-sync", 1000.0)
    writer.add_trial(first)
    writer.finish("complete")
    writer.close()
    loaded = load_results(tmp_path)
    assert loaded.complete
    assert loaded.trials == (first,)
    assert loaded.environments["abc"] == env
    assert loaded.header == header()


def test_interrupted_run_keeps_finished_trials_and_survives_a_torn_line(tmp_path: Path) -> None:
    path = results_path(tmp_path)
    writer = ResultsWriter(path, header())
    writer.add_trial(trial("flask:gunicorn-sync", 1000.0))
    writer.close()
    with open(path, "a") as f:
        f.write('{"record": "trial", "spec": {')  # the harness died mid-write
    loaded = load_results(tmp_path)
    assert not loaded.complete
    assert len(loaded.trials) == 1


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = results_path(tmp_path)
    path.write_text('{"record": "run", "schema_version": 99}\n')
    with pytest.raises(UserError, match="upgrade pywebbench"):
        load_results(tmp_path)


def test_missing_and_garbled_files_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="no results file"):
        load_results(tmp_path)
    results_path(tmp_path).write_text("garbage\n{}\n")
    with pytest.raises(UserError, match="not a JSON record"):
        load_results(tmp_path)


def test_validity_follows_errors() -> None:
    assert trial("a:b", 10.0).valid
    bad = trial("a:b", 10.0, load=synthetic_result(10.0, 1.0, non_2xx=1))
    assert not bad.valid
    failed = trial("a:b", 10.0, status=TrialStatus.SERVER_FAILED)
    assert not failed.valid


def test_a_version_3_file_migrates_to_the_restart_method(tmp_path: Path) -> None:
    import json

    path = results_path(tmp_path)
    writer = ResultsWriter(path, header())
    writer.add_trial(trial("flask:gunicorn-sync", 1000.0, round_no=3))
    writer.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    records[0]["schema_version"] = 3
    for field in ("method", "launch", "settle_s", "partner", "slot"):
        records[1]["spec"].pop(field)
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    (loaded,) = load_results(tmp_path).trials
    assert loaded.spec.method == "restart" and loaded.spec.launch == 3 and loaded.spec.round == 3


def test_an_unwritable_output_directory_is_one_line_before_anything(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="cannot write results to /proc/nope"):
        ResultsWriter(results_path(Path("/proc/nope")), header())


def test_a_results_file_another_run_is_writing_is_refused(tmp_path: Path) -> None:
    first = ResultsWriter(results_path(tmp_path), header())
    try:
        with pytest.raises(UserError, match="another pywebbench run is writing"):
            ResultsWriter(results_path(tmp_path), header())
    finally:
        first.close()
    ResultsWriter(results_path(tmp_path), header()).close()  # free again once the first is closed


def test_run_directories_are_private(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    ResultsWriter(results_path(run_dir), header()).close()
    assert run_dir.stat().st_mode & 0o777 == 0o700


def test_a_version_4_file_reads_as_the_current_version(tmp_path: Path) -> None:
    from pywebbench.results.model import SCHEMA_VERSION
    from pywebbench.results.store import migrate

    assert SCHEMA_VERSION == 7
    assert migrate({"record": "run", "schema_version": 4}, 4) == {"record": "run", "schema_version": 7}
    assert migrate({"record": "run", "schema_version": 5}, 5) == {"record": "run", "schema_version": 7}
    assert migrate({"record": "run", "schema_version": 6}, 6) == {"record": "run", "schema_version": 7}
    trial = {"record": "trial", "spec": {"method": "interleaved", "launch": 2}}
    assert migrate(trial, 4) == trial
