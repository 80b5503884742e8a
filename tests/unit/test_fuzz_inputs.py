"""Fuzzing every text a user hands the harness: a value or a one-line UserError, never a crash.

Config files, PYWEBBENCH_* variables, the knob grammar, stack globs, --rate lists, CPU lists
and durations are parsed directly here (fast, many examples); test_fuzz_cli.py runs a few
through the real command line.
"""

from __future__ import annotations

import contextlib
import io
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from pywebbench.catalog.registry import Catalog, build_catalog
from pywebbench.commands.arguments import build_parser
from pywebbench.plan.declared import rates, take_refused
from pywebbench.commands.common import command_options as _options, stack_glob as _glob
from pywebbench.core.errors import UserError
from pywebbench.plan.options import RunOptions, parse_cpu_list, parse_duration
from pywebbench.plan.sources import from_sources
from pywebbench.plan.sweep import parse_knobs

FUZZ = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Text that looks like the grammar as well as noise: the parsers' own punctuation, digits,
# units, words, non-ASCII digits and the floats' special names.
GRAMMAR = st.sampled_from(list("0123456789.,-=:*?[]! _eEkKmMsSh+x") + ["..", "nan", "inf", "²", "٣", "\x00",
                                                                        "workers", "connections", "1e400"])
GRAMMAR_TEXT = st.lists(GRAMMAR, max_size=12).map("".join)
ANY_TEXT = st.one_of(st.text(max_size=30), GRAMMAR_TEXT)


def assert_one_line(exc: BaseException) -> None:
    message = str(exc)
    assert message and "\n" not in message and "Traceback" not in message, repr(message)


def accepts_or_refuses(parse: Callable[[], Any], *, several: bool = False) -> Any:
    """The value, or None after a one-line UserError (`several`: one line per problem, as a config
    file or the environment with several bad values is refused); any other exception fails the test."""
    try:
        return parse()
    except UserError as exc:
        if several:
            assert exc.problems and all(p.strip() and "Traceback" not in p for p in exc.problems), repr(str(exc))
            assert str(exc) == "\n".join(exc.problems)
        else:
            assert_one_line(exc)
        return None


@FUZZ
@given(ANY_TEXT)
def test_durations(text: str) -> None:
    value = accepts_or_refuses(lambda: parse_duration(text))
    assert value is None or (math.isfinite(value) and value > 0)


@FUZZ
@given(ANY_TEXT)
def test_cpu_lists(text: str) -> None:
    value = accepts_or_refuses(lambda: parse_cpu_list(text))
    assert value is None or (value and all(c >= 0 for c in value) and len(value) <= 4096)


@FUZZ
@given(ANY_TEXT)
def test_rate_lists(text: str) -> None:
    try:
        value = rates(text)
    except ValueError as exc:  # argparse turns it into one line and exit 2
        assert_one_line(exc)
        return
    assert value and all(math.isfinite(v) and v > 0 for v in value)


@FUZZ
@given(st.lists(st.one_of(ANY_TEXT, st.builds("{}={}".format, st.sampled_from(
    ["workers", "connections", "max_db_sessions", "db_delay", "threads", "nope", ""]), GRAMMAR_TEXT)), max_size=3))
def test_knob_grammar(texts: list[str]) -> None:
    axes = accepts_or_refuses(lambda: parse_knobs(texts))
    if axes is not None:
        for axis in axes:
            assert axis.values
            assert all(not isinstance(v, float) or math.isfinite(v) for v in axis.values)


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return build_catalog()


@FUZZ
@given(st.one_of(ANY_TEXT, st.builds("{}:{}".format, ANY_TEXT, ANY_TEXT),
                 st.sampled_from(["flask:*", "*:gunicorn-*", "[", "flask:[", "*", ":", "flask:", ":gunicorn"])))
def test_stack_globs(catalog: Catalog, text: str) -> None:
    found = accepts_or_refuses(lambda: _glob(catalog, text))
    assert found is None or len(found) >= 1


OPTION_KEYS = st.sampled_from([
    "stacks", "workloads", "connections", "duration", "warmup", "workers", "threads", "stack_cpus", "loadgen-cpus",
    "generator", "keepalive", "seed", "max_db_sessions", "db_delay", "precision", "budget", "rate", "method",
    "workload_requests", "out_dir", "timeout", "settle", "nope", "DURATION",
])
TOML_VALUES = st.recursive(
    st.one_of(st.integers(min_value=-(2**63), max_value=2**63 - 1), st.floats(), st.booleans(), ANY_TEXT),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.sampled_from(["a", "b"]), inner,
                                                                          max_size=2)),
    max_leaves=4,
)


def assert_valid(options: RunOptions | None) -> None:
    if options is None:
        return
    for name in ("duration_s", "warmup_s", "timeout_s", "settle_s", "db_delay_s", "upstream_delay_s"):
        assert math.isfinite(getattr(options, name)), name
    for name in ("precision", "rate", "budget_s"):
        value = getattr(options, name)
        assert value is None or math.isfinite(value), name


@FUZZ
@given(st.dictionaries(OPTION_KEYS, st.one_of(ANY_TEXT, st.sampled_from(["nan", "inf", "-1", "0", "1e999"])),
                       max_size=3))
def test_environment_variables(values: dict[str, str]) -> None:
    environ = {"PYWEBBENCH_" + k.upper().replace("-", "_"): v for k, v in values.items()}
    environ["PYWEBBENCH_CACHE"] = "/nonexistent"  # read elsewhere, never an option
    assert_valid(accepts_or_refuses(lambda: from_sources(config_file=None, environ=environ, flags={}), several=True))


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + "".join(c if c.isprintable() and c not in '"\\' else f"\\u{ord(c):04x}" for c in value) + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{" + ", ".join(f"{k} = {_toml_value(v)}" for k, v in value.items()) + "}"


@FUZZ
@example({"stack_cpus": [math.inf]}, False).via("found by this test: int(inf) raised OverflowError")
@example({"workers": math.nan}, True).via("int(nan) raises ValueError")
@given(st.dictionaries(OPTION_KEYS, TOML_VALUES, max_size=4), st.booleans())
def test_config_file_tables(tmp_path_factory: pytest.TempPathFactory, table: dict[str, Any], in_run: bool) -> None:
    text = ("[run]\n" if in_run else "") + "".join(f'"{k}" = {_toml_value(v)}\n' for k, v in table.items())
    path = tmp_path_factory.mktemp("cfg") / "pwb.toml"
    path.write_text(text)
    assert_valid(accepts_or_refuses(lambda: from_sources(config_file=path, environ={}, flags={}), several=True))


@FUZZ
@given(st.one_of(st.binary(max_size=200), st.text(max_size=200).map(str.encode),
                 st.sampled_from([b"run = 3", b"[run]\nrun = 1\n[run.x]\n", b"\xff\xfe[run]", b"[[run]]\na=1",
                                  b"[run]\nstacks = [[1]]", b"[run]\nduration = nan", b"[run]\nworkload_requests = 5"])))
def test_config_file_bytes(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    path = tmp_path_factory.mktemp("cfg") / "pwb.toml"
    path.write_bytes(data)
    assert_valid(accepts_or_refuses(lambda: from_sources(config_file=path, environ={}, flags={}), several=True))


def test_config_file_that_is_a_directory(tmp_path: Path) -> None:
    with pytest.raises(UserError) as caught:
        from_sources(config_file=tmp_path, environ={}, flags={})
    assert_one_line(caught.value)


@FUZZ
@given(st.sampled_from(["--duration", "--warmup", "--timeout", "--settle", "--db-delay", "--upstream-delay",
                        "--precision", "--budget", "--rate", "--connections", "--stack-cpus"]),
       st.one_of(ANY_TEXT, st.sampled_from(["nan", "inf", "-inf", "1e999", "-0", "0"])))
def test_numeric_flags(flag: str, value: str) -> None:
    """A flag's value through argparse and the option layers: parsed, or refused in one line."""
    stderr = io.StringIO()
    try:
        with contextlib.redirect_stderr(stderr):
            args = build_parser().parse_args(["run", f"{flag}={value}", "--stack", "flask:gunicorn-sync"])
    except SystemExit as exc:
        assert exc.code == 2 and stderr.getvalue().count("\n") == 1, stderr.getvalue()
        return
    if refused := take_refused(args):  # what cli.main names, one line for the one bad flag
        assert len(refused) == 1 and refused[0].startswith(f"argument {flag}: "), refused
        return
    options = accepts_or_refuses(lambda: _options(args, {"rate": args.rate[0]} if args.rate else {})[0])
    assert_valid(options)
