"""A run's options from every source: config file < preset < PYWEBBENCH_* variables < flags.

The config file (`--config bench.toml`, a `[run]` table) and the environment spell each option as
its flag (`duration`, `stack`, `no_keepalive`: dashes as underscores, upper-case after
PYWEBBENCH_ in the environment) or as its RunOptions field (`duration_s`, `stacks`). Every
spelling comes from the declarations (plan/declared.py), so a new option needs no line here. Text
is read as the option's flag reads it (its declared parse and choices); a repeatable option's text
is a comma-separated list (PYWEBBENCH_STACK=flask:gunicorn-sync,starlette:uvicorn). Every problem
of the config file and the environment is named as the user spelt it, one line each, all of them
before anything starts.
"""

from __future__ import annotations

import argparse
import difflib
import tomllib
import types
import typing
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from pywebbench.core.errors import UserError
from pywebbench.plan.cpus import parse_cpu_list
from pywebbench.plan.declared import KNOB_FIELD, OPTIONS, Kind, Option, all_options
from pywebbench.plan.options import SPELLINGS, RunOptions
from pywebbench.results.model import KnobSettings, with_settings

ENV_PREFIX = "PYWEBBENCH_"
NOT_OPTIONS = frozenset({"PYWEBBENCH_CACHE"})
"""PYWEBBENCH_* variables read elsewhere, never an option."""


@dataclass(frozen=True)
class Spelling:
    """What one spelling of an option sets."""

    field: str
    option: Option | None
    """Its declaration; None for a RunOptions field no flag sets (workload_requests)."""
    negated: bool = False
    """The flag of a switch that sets False: `no_keepalive = true` sets keepalive False."""
    knob: str | None = None
    """A field-less knob's name: the spelling sets its entry in RunOptions.knobs (field is `knobs.NAME`)."""


def _spellings() -> dict[str, Spelling]:
    declared = {o.field: o for o in OPTIONS}
    table: dict[str, Spelling] = {}
    for name in (f.name for f in fields(RunOptions)):
        option = declared.get(name)
        table[name] = Spelling(name, option)
        if option is not None:
            table.update({spelt: Spelling(name, option, negated=option.kind is Kind.OFF) for spelt in option.spellings})
    for short, name in SPELLINGS.items():  # a seconds field as knobs spell it: ready_timeout
        table.setdefault(short, Spelling(name, declared.get(name)))
    return table


SPELLED: dict[str, Spelling] = _spellings()
"""Every name of a RunOptions field the config file and the environment (lower-cased, after
PYWEBBENCH_) may use; `spelled()` adds the field-less knobs declared when it is asked."""


def spelled() -> dict[str, Spelling]:
    """SPELLED and each field-less knob's flag (`spin_loops`) and field (`knobs.spin_loops`)."""
    table = dict(SPELLED)
    for option in all_options():
        if option.field.startswith(KNOB_FIELD):
            knob = option.field.removeprefix(KNOB_FIELD)
            table.update({name: Spelling(option.field, option, knob=knob) for name in (*option.spellings, option.field)})
    return table


def _folded(values: dict[str, Any]) -> dict[str, Any]:
    """The field-less knobs' values (keyed `knobs.NAME`) set in `knobs`, over any given there."""
    given = {k.removeprefix(KNOB_FIELD): v for k, v in values.items() if k.startswith(KNOB_FIELD)}
    typed = {k: v for k, v in values.items() if not k.startswith(KNOB_FIELD)}
    if given:
        typed["knobs"] = with_settings(typed.get("knobs", ()), given)
    return typed


def _knob_settings(value: Any) -> tuple[tuple[str, Any], ...]:
    """A table of field-less knob = value (a results header's `knobs`), each read by its knob's flag."""
    table = spelled()
    pairs = value.items() if isinstance(value, Mapping) else value
    read = []
    for name, setting in pairs:
        spelling = table.get(KNOB_FIELD + _text(name))
        if spelling is None or spelling.option is None or spelling.option.parse is None:
            raise ValueError(f"no knob {name} is declared without a field")
        read.append((name, spelling.option.parse(str(setting))))
    return tuple(read)


_TYPES: dict[str, Any] = typing.get_type_hints(RunOptions)
_EXPECTED: dict[Any, str] = {
    bool: "true or false", int: "a whole number", float: "a number", str: "text", Path: "a path",
    tuple[str, ...]: "a list of names", tuple[int, ...]: "a CPU list such as 0-2,5",
    tuple[tuple[str, int], ...]: "a table of workload = request count",
}
_UNREADABLE = (ValueError, TypeError, ArithmeticError, argparse.ArgumentTypeError, UserError)


def _type(field: str) -> Any:
    """The field's type without its None: int for `int | None`."""
    hint = _TYPES[field]
    if isinstance(hint, types.UnionType):
        return next(a for a in typing.get_args(hint) if a is not type(None))
    return hint


def _boolean(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    word = value.strip().lower() if isinstance(value, str) else None
    if word in ("1", "true", "yes", "on"):
        return True
    if word in ("0", "false", "no", "off"):
        return False
    raise ValueError(value)


def _whole(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(value)
    if isinstance(value, float) and not value.is_integer():
        raise ValueError(value)  # 2.5 workers: not silently 2
    return int(value)


def _number(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise TypeError(value)
    return float(value)


def _items(value: Any, kind: type) -> list[Any]:
    if not isinstance(value, list | tuple) or not all(isinstance(v, kind) and not isinstance(v, bool) for v in value):
        raise TypeError(value)
    return list(value)


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(value)
    return value


def _read(spelling: Spelling, value: Any) -> Any:
    """The value as the field holds it, or one of _UNREADABLE."""
    if spelling.knob is not None and spelling.option is not None and spelling.option.parse is not None:
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise TypeError(value)
        return spelling.option.parse(str(value))  # as its flag reads it; a config file's 30000 too
    kind, option = _type(spelling.field), spelling.option
    if kind == KnobSettings:
        return _knob_settings(value)
    if kind is bool:
        return _boolean(value) is not spelling.negated
    if isinstance(value, str) and option is not None and option.parse is not None and not option.by_command:
        return option.parse(value)  # as its flag reads it: 10m, 5%, 2ms, 0-2,5
    if kind == tuple[str, ...]:
        items = value.split(",") if isinstance(value, str) else _items(value, str)
        return tuple(i.strip() for i in items if i.strip())
    if kind == tuple[int, ...]:
        return parse_cpu_list(value if isinstance(value, str) else ",".join(map(str, _items(value, int))))
    if kind == tuple[tuple[str, int], ...]:
        pairs = value.items() if isinstance(value, Mapping) else value
        return tuple((_text(k), _whole(v)) for k, v in pairs)
    if kind is int:
        return _whole(value)
    if kind is float:
        return _number(value)
    if kind is Path:
        return Path(_text(value))
    return _text(value)  # text, and the enums (validate() names a member that is not one)


def _problem(spelling: Spelling, value: Any) -> str | None:
    """What is wrong with a value read alone: unreadable, not a choice, or out of its range."""
    option = spelling.option
    if spelling.knob is not None:
        return None  # its reader, the sweep grammar's, checked its range
    if option is not None and option.choices and value not in option.choices:
        return f"must be one of {', '.join(option.choices)}"
    alone = replace(RunOptions(), **{spelling.field: value})
    return next((why for name, why in alone.number_problems() if name == spelling.field), None)


def _shown(text: str) -> str:
    return text if text.isprintable() else repr(text)


@dataclass(frozen=True)
class _Given:
    """One value as the user gave it."""

    where: str
    """Named as the user spelt it: 'PYWEBBENCH_DURATION', 'bench.toml [run] duration'."""
    name: str
    """The spelling to look up (lower-case, dashes as underscores)."""
    value: Any


def _read_all(given: Iterable[_Given], problems: list[str], table: Mapping[str, Spelling],
              suggest: Callable[[str], str] = str) -> dict[str, Any]:
    """RunOptions field -> value by `table` (spelled()), each problem appended to `problems` as one line."""
    values: dict[str, Any] = {}
    where_set: dict[str, str] = {}
    for item in given:
        spelling = table.get(item.name)
        if spelling is None:
            close = [f" (did you mean {suggest(name)}?)" for name in difflib.get_close_matches(item.name, table, n=1)]
            problems.append(f"{item.where}: unknown option{''.join(close)}")
            continue
        if spelling.field in where_set:
            problems.append(f"{item.where}: sets the same option as {where_set[spelling.field]}")
            continue
        where_set[spelling.field] = item.where
        try:
            value = _read(spelling, item.value)
            why = _problem(spelling, value)
        except _UNREADABLE as exc:
            readable = isinstance(exc, argparse.ArgumentTypeError | UserError)
            expected = "a value it takes" if spelling.knob else _EXPECTED.get(_type(spelling.field), "a value it takes")
            why = str(exc) if readable else f"not {expected}"
        if why is not None:
            problems.append(f"{item.where}: cannot use {item.value!r}: {why}")
        else:
            values[spelling.field] = value
    return values


def _config(path: Path, problems: list[str]) -> list[_Given]:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        problems.append(f"cannot read config {path}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        problems.append(f"malformed config {path}: not UTF-8 text (byte {exc.start})")
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"malformed config {path}: {exc}")
    else:
        table = data.get("run", data)
        if isinstance(table, dict):
            where = f"{path} [run]" if "run" in data else str(path)
            return [_Given(f"{where} {_shown(k)}", k.replace("-", "_").lower(), v) for k, v in table.items()]
        problems.append(f"{path}: [run] must be a table")
    return []


def _environment(environ: Mapping[str, str]) -> list[_Given]:
    return [_Given(_shown(key), key[len(ENV_PREFIX):].lower(), value) for key, value in environ.items()
            if key.startswith(ENV_PREFIX) and key not in NOT_OPTIONS]


def from_sources(
    *,
    config_file: Path | None,
    environ: Mapping[str, str],
    flags: Mapping[str, Any],
    preset: Mapping[str, Any] | None = None,
) -> RunOptions:
    """Layer the sources: config file, then a preset, then PYWEBBENCH_* variables, then flags.

    Every problem of the config file, the preset and the environment is refused at once, one
    line each; then the options together are checked (RunOptions.validate)."""
    problems: list[str] = []
    table = spelled()
    values = _read_all(_config(config_file, problems), problems, table) if config_file is not None else {}
    preset_values = (_Given(f"preset option {k}", k.replace("-", "_").lower(), v) for k, v in (preset or {}).items())
    values |= _read_all(preset_values, problems, table)
    values |= _read_all(_environment(environ), problems, table, suggest=lambda name: ENV_PREFIX + name.upper())
    if problems:
        raise UserError("\n".join(problems))
    for key, value in flags.items():
        if value is not None:  # typed by the parser (plan/declared.py) and keyed by field
            spelling = table.get(key.replace("-", "_").lower())
            if spelling is None:
                raise UserError(f"unknown option {key!r}")
            values[spelling.field] = (not value) if spelling.negated else value
    return replace(RunOptions(), **_folded(values)).validate()


def from_json(data: Mapping[str, Any]) -> RunOptions:
    """Options as a results header stored them (RunOptions.to_json), for --resume."""
    problems: list[str] = []
    stored = (_Given(f"stored option {name}", name, value) for name, value in data.items()
              if value is not None and name in _TYPES)
    values = _read_all(stored, problems, spelled())
    if problems:
        raise UserError("\n".join(problems))
    return replace(RunOptions(), **_folded(values)).validate()
