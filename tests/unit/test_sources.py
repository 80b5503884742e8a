"""The config file and the environment: every declared option by its flag and its field, each
problem named as the user spelt it, all of them at once (plan/sources.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pywebbench.cli import main
from pywebbench.core.errors import UserError
from pywebbench.plan.declared import OPTIONS, Kind, Option
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import ENV_PREFIX, SPELLED, from_sources

FIELDS = set(RunOptions.__dataclass_fields__)
SET_BY_RUN_OPTIONS = [o for o in OPTIONS if o.field in FIELDS]


def _refusal(*, environ: dict[str, str] | None = None, config: Path | None = None) -> list[str]:
    with pytest.raises(UserError) as caught:
        from_sources(config_file=config, environ=environ or {}, flags={})
    return caught.value.problems


def _names(option_field: str) -> list[str]:
    option = next(o for o in OPTIONS if o.field == option_field)
    return [*option.spellings, option.field]


def test_every_spelling_of_a_declared_option_sets_its_field() -> None:
    # a report's look and the rate a tuning answer sizes pods for: no RunOptions field
    assert {o.field for o in OPTIONS} - FIELDS == {"wide", "target_rate"}
    for option in SET_BY_RUN_OPTIONS:
        for name in _names(option.field):
            assert SPELLED[name].field == option.field, name
            assert SPELLED[name].negated == (option.kind is Kind.OFF and name != option.field), name
    assert all(SPELLED[name].field == name for name in FIELDS)  # no flag is spelt as another field
    assert {s.field for s in SPELLED.values()} == FIELDS


@pytest.mark.parametrize("option", SET_BY_RUN_OPTIONS, ids=lambda o: o.flag)
def test_no_declared_spelling_is_unknown_to_the_config_file_or_the_environment(option: Option, tmp_path: Path) -> None:
    for name in _names(option.field):
        config = tmp_path / f"{name}.toml"
        config.write_text(f'[run]\n{name} = "?"\n')
        for file, environ in ((None, {ENV_PREFIX + name.upper(): "?"}), (config, {})):
            try:
                from_sources(config_file=file, environ=environ, flags={})
            except UserError as exc:
                assert "unknown option" not in str(exc), (name, str(exc))


def test_the_environment_takes_the_flag_spellings_it_refused() -> None:
    options = from_sources(config_file=None, flags={}, environ={
        "PYWEBBENCH_STACK": "flask:gunicorn-sync, starlette:uvicorn", "PYWEBBENCH_WORKLOAD": "hello,cpu",
        "PYWEBBENCH_OUT": "runs/here", "PYWEBBENCH_NO_KEEPALIVE": "1", "PYWEBBENCH_STACK_CPUS": "1-2",
        "PYWEBBENCH_ROUNDS": "3", "PYWEBBENCH_CACHE": "/elsewhere"})
    assert options.stacks == ("flask:gunicorn-sync", "starlette:uvicorn") and options.workloads == ("hello", "cpu")
    assert options.out_dir == Path("runs/here") and options.keepalive is False
    assert options.stack_cpus == (1, 2) and options.repeats == 3


def test_values_are_read_as_their_flags_read_them(tmp_path: Path) -> None:
    config = tmp_path / "bench.toml"
    config.write_text('[run]\nstack = ["flask:gunicorn-sync"]\nworkload = "hello,cpu"\nbudget = "10m"\n'
                      'equivalence = "5%"\nno_keepalive = false\nstack-cpus = [1, 2]\nduration = 3\n')
    options = from_sources(config_file=config, flags={}, environ={
        "PYWEBBENCH_TOPOLOGY": "netns", "PYWEBBENCH_RTT": "2ms", "PYWEBBENCH_WARMUP": "0"})
    assert options.stacks == ("flask:gunicorn-sync",) and options.workloads == ("hello", "cpu")
    assert options.budget_s == 600 and options.equivalence == 0.05 and options.keepalive is True
    assert options.stack_cpus == (1, 2) and options.duration_s == 3.0 and options.rtt_s == 0.002
    assert options.warmup_s == 0.0


def test_an_error_names_the_variable_not_the_field() -> None:
    assert _refusal(environ={"PYWEBBENCH_DURATION": "abc"}) == ["PYWEBBENCH_DURATION: cannot use 'abc': not a number"]
    assert _refusal(environ={"PYWEBBENCH_DURATION_S": "0"}) == [
        "PYWEBBENCH_DURATION_S: cannot use '0': must be positive, got 0.0"]


def test_a_config_error_names_the_file_table_and_key(tmp_path: Path) -> None:
    config = tmp_path / "bench.toml"
    config.write_text('[run]\nduration = "abc"\n')
    assert _refusal(config=config) == [f"{config} [run] duration: cannot use 'abc': not a number"]
    config.write_text('duration = "abc"\n')  # no [run] table: the file is the table
    assert _refusal(config=config) == [f"{config} duration: cannot use 'abc': not a number"]


def test_every_problem_of_the_config_file_and_the_environment_is_its_own_line(tmp_path: Path) -> None:
    config = tmp_path / "bench.toml"
    config.write_text('[run]\nconections = 5\nworkers = 2.5\ngenerator = "siege"\nstack = ["a:b", 3]\n'
                      'budget = "10x"\nduration = 4\n')
    problems = _refusal(config=config, environ={
        "PYWEBBENCH_DURATON": "1", "PYWEBBENCH_CONNECTIONS": "0", "PYWEBBENCH_ALLOW_REMOTE": "maybe",
        "PYWEBBENCH_STACKS": "a:b", "PYWEBBENCH_STACK": "c:d", "PYWEBBENCH_WARMUP": "-1"})
    where = f"{config} [run]"
    assert problems == [
        f"{where} conections: unknown option (did you mean connections?)",
        f"{where} workers: cannot use 2.5: not a whole number",
        f"{where} generator: cannot use 'siege': must be one of wrk, ab, oha, vegeta",
        f"{where} stack: cannot use ['a:b', 3]: not a list of names",
        f"{where} budget: cannot use '10x': bad duration '10x': use a form like 10m, 90s or 1h30m",
        "PYWEBBENCH_DURATON: unknown option (did you mean PYWEBBENCH_DURATION?)",
        "PYWEBBENCH_CONNECTIONS: cannot use '0': must be positive, got 0",
        "PYWEBBENCH_ALLOW_REMOTE: cannot use 'maybe': not true or false",
        "PYWEBBENCH_STACK: sets the same option as PYWEBBENCH_STACKS",
        "PYWEBBENCH_WARMUP: cannot use '-1': must be zero or positive, got -1.0",
    ]


def test_the_command_line_prints_each_problem_as_an_error_line_and_exits_2(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    for key in list(os.environ):
        if key.startswith(ENV_PREFIX) and key != "PYWEBBENCH_CACHE":
            monkeypatch.delenv(key)
    monkeypatch.setenv("PYWEBBENCH_DURATION", "abc")
    monkeypatch.setenv("PYWEBBENCH_STACK", "flask:gunicorn-sync")
    monkeypatch.setenv("PYWEBBENCH_CONNECTIONS", "many")
    assert main(["run"]) == 2  # refused before anything starts
    assert sorted(capsys.readouterr().err.splitlines()) == [
        "pywebbench: error: PYWEBBENCH_CONNECTIONS: cannot use 'many': not a whole number",
        "pywebbench: error: PYWEBBENCH_DURATION: cannot use 'abc': not a number",
    ]


def test_flags_still_win_and_their_checks_name_the_flag() -> None:
    options = from_sources(config_file=None, environ={"PYWEBBENCH_DURATION": "3"}, flags={"duration_s": 5.0})
    assert options.duration_s == 5.0
    with pytest.raises(UserError, match="^--duration must be positive, got 0.0$"):
        from_sources(config_file=None, environ={}, flags={"duration_s": 0.0})
