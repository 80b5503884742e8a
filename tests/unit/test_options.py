from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.options import CpuSplit, RunOptions, default_split, parse_cpu_list
from pywebbench.plan.sources import from_sources


def test_cpu_list_syntax() -> None:
    assert parse_cpu_list("0-2,5") == (0, 1, 2, 5)
    assert parse_cpu_list("3") == (3,)
    with pytest.raises(UserError):
        parse_cpu_list("2-1")
    with pytest.raises(UserError):
        parse_cpu_list("a")
    assert len(parse_cpu_list("0-4095")) == 4096
    with pytest.raises(UserError, match="CPUs 0-4095"):
        parse_cpu_list("0-999999999")  # a typo refused at once, not a billion-entry set


def test_default_split_is_disjoint_from_two_cpus() -> None:
    assert default_split((0, 1)) == CpuSplit(stack=(1,), loadgen=(0,))
    assert default_split(tuple(range(8))) == CpuSplit(stack=(2, 3, 4, 5, 6, 7), loadgen=(0, 1))
    single = default_split((0,))
    assert single.stack == single.loadgen == (0,) and not single.disjoint


def test_unknown_cpu_is_refused() -> None:
    with pytest.raises(UserError, match="not usable"):
        RunOptions(stack_cpus=(7,)).cpu_split((0, 1))


def test_layers_config_then_env_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "bench.toml"
    config.write_text('[run]\nconnections = 50\nduration = 3\nstacks = ["flask:gunicorn-sync"]\nthreads = 4\n')
    options = from_sources(
        config_file=config,
        environ={"PYWEBBENCH_CONNECTIONS": "60", "PYWEBBENCH_WARMUP": "0"},
        flags={"connections": 70, "workers": None},
    )
    assert options.connections == 70
    assert options.duration_s == 3.0
    assert options.warmup_s == 0.0
    assert options.threads == 4
    assert options.stacks == ("flask:gunicorn-sync",)


def test_malformed_config_is_one_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "bad.toml"
    config.write_text("[run\nconnections = ")
    with pytest.raises(UserError, match="malformed config"):
        from_sources(config_file=config, environ={}, flags={})


def test_unknown_option_and_bad_values_are_refused(tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[run]\nconectons = 5\n")
    with pytest.raises(UserError, match="unknown option"):
        from_sources(config_file=config, environ={}, flags={})
    with pytest.raises(UserError, match="cannot use"):
        from_sources(config_file=None, environ={"PYWEBBENCH_CONNECTIONS": "many"}, flags={})
    with pytest.raises(UserError, match="must be positive"):
        from_sources(config_file=None, environ={}, flags={"duration": 0.0})


def test_profile_window_needs_profile_and_a_positive_length() -> None:
    options = from_sources(config_file=None, environ={"PYWEBBENCH_PROFILE_WINDOW": "30s"},
                           flags={"profile": True})
    assert options.profile_s == 30.0
    with pytest.raises(UserError, match="add --profile"):
        from_sources(config_file=None, environ={}, flags={"profile_window": 30.0})
    with pytest.raises(UserError, match="must be positive"):
        from_sources(config_file=None, environ={}, flags={"profile": True, "profile_window": 0.0})
