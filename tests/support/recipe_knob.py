"""docs/layout.md's knob recipe for a knob without a field of its own: a throwaway knob (`spin_loops`,
the test apps' extra work per /hello, apps/pwb_common.py) declared in one registration, and the
places its declaration alone must reach before a sweep: its flag, its help and reference row, its
config-file key and environment variable, a bad value refused in one line (exit 2).

`fieldless_problems` asks each of those places; tests/unit/test_recipes.py adds the plan, the
results, the columns and the chart axis, and takes each derivation away to show it is checked.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from io import StringIO
from pathlib import Path

from pywebbench.cli import main
from pywebbench.commands.arguments import build_parser
from pywebbench.commands.common import options_and_knobs
from pywebbench.core.errors import UserError
from pywebbench.plan.declared import reference_table
from pywebbench.plan.knob_declarations import AppEnvironment, Kind, Knob, register_knob, withdraw_knob
from pywebbench.plan.options import RunOptions
from pywebbench.plan.sources import from_sources
from pywebbench.plan.sweep import parse_values

SPIN = Knob("spin_loops", None, Kind.COUNT, lambda v: f"{v:,} spin loops per request", "spin loops per request",
            zero_allowed=True, applies=AppEnvironment("PWB_EXTRA_WORK_LOOPS"))
"""The test apps spin this many loops on every /hello: CPU per request that grows with the value."""


@contextmanager
def registered(knob: Knob = SPIN) -> Iterator[Knob]:
    """`knob` registered for the block: the one line the recipe asks for, undone after."""
    register_knob(knob)
    try:
        yield knob
    finally:
        withdraw_knob(knob)


@contextmanager
def _no_pywebbench_environment() -> Iterator[None]:
    saved = {k: os.environ.pop(k) for k in list(os.environ) if k.startswith("PYWEBBENCH_") and k != "PYWEBBENCH_CACHE"}
    try:
        yield
    finally:
        os.environ.update(saved)


def fieldless_problems(knob: Knob, one: str, bad: str, tmp: Path) -> list[str]:
    """Where a field-less knob's declaration does not reach: flag, help, reference, config, env, refusal."""
    flag, wanted = "--" + knob.name.replace("_", "-"), _read_one(knob, one)
    problems = []
    if flag not in _help("sweep"):
        problems.append(f"{knob.name}: `sweep --help` has no {flag} (plan/declared.all_options)")
    if f"`{flag}`" not in reference_table():
        problems.append(f"{knob.name}: docs/reference's option table has no {flag} (plan/declared.reference_table)")
    with _no_pywebbench_environment():
        problems += _layers(knob, flag, one, wanted, tmp)
        problems += _refused(knob, flag, bad)
    return problems


def _read_one(knob: Knob, text: str) -> object:
    return parse_values(knob, text)[0]


def _help(command: str) -> str:
    out = StringIO()
    try:
        with redirect_stdout(out):
            build_parser().parse_args([command, "--help"])
    except SystemExit:
        pass
    return out.getvalue()


def _layers(knob: Knob, flag: str, one: str, wanted: object, tmp: Path) -> list[str]:
    """The flag, the config file's key and the environment variable each set the knob's value."""
    config = tmp / "bench.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[run]\n{knob.name} = {one}\n", encoding="utf-8")
    env = {"PYWEBBENCH_" + knob.name.upper(): one}
    problems = []
    for where, read in (
        (f"the flag {flag}", lambda: options_and_knobs(build_parser().parse_args(
            ["sweep", "--stack", "flask:gunicorn-sync", flag, one]))[0]),
        ("the config file's key", lambda: from_sources(config_file=config, environ={}, flags={})),
        (f"the variable {next(iter(env))}", lambda: from_sources(config_file=None, environ=env, flags={})),
    ):
        try:
            options: RunOptions = read()
        except (UserError, SystemExit) as exc:
            problems.append(f"{knob.name}: {where} is refused (plan/sources.py): {exc}")
            continue
        if dict(options.knobs).get(knob.name) != wanted:
            problems.append(f"{knob.name}: {where} does not set it (plan/sources.py): {options.knobs}")
    return problems


def _refused(knob: Knob, flag: str, bad: str) -> list[str]:
    """A bad value is refused before anything starts: one line naming the flag, exit 2."""
    err = StringIO()
    with redirect_stderr(err):
        try:
            code = main(["sweep", "--stack", "flask:gunicorn-sync", f"{flag}={bad}", "--out", os.devnull])
        except SystemExit as exc:  # argparse's own refusal (an unknown flag): exit 2 too
            code = exc.code if isinstance(exc.code, int) else 1
    lines = err.getvalue().splitlines()
    if code != 2 or len(lines) != 1 or f"argument {flag}: {knob.name}" not in lines[0]:
        return [f"{knob.name}: {flag}={bad} is not refused in one line with exit 2: {code} {lines}"]
    return []
