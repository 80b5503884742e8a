"""Each launch's environment: the stack's requirements on the interpreter its window asks for
(`python`) with the package its window pins (`pin`), or the one line saying why that cell cannot
have it ('psycopg-binary 3.3.9: no build for cp314t', 'does not use gunicorn').

A pin replaces the catalog's requirement of that package and overrides it wherever another
requirement pulls it in. A stack whose own environment holds no such package does not use it and
runs unchanged in that cell (said once in a note): the baseline and the other stacks stay in every
point as its controls, so each point's ratios are read against the same stacks. On a free-threaded build
and on PyPy, psycopg[binary] (no wheels there) becomes psycopg, its pure-Python implementation
over the system's libpq: only the DB workloads' client differs, and the environment record says so.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from pywebbench.catalog.model import Stack
from pywebbench.core.errors import UserError
from pywebbench.plan.pins import normalise
from pywebbench.results.model import TrialSpec, TrialStatus
from pywebbench.stage.envs import BuiltEnv, EnvBuildError, EnvProvider, EnvSpec
from pywebbench.stage.interpreters import Interpreter, resolve
from pywebbench.stage.pinning import ExactPin, exact
from pywebbench.stage.skip_reasons import import_problem, install_problem

PIN_ENV = "PWB_PIN"
"""A variant's own pin, in its app environment (a gate's base and head: commands/pin_gate.py); it
wins over the cell's, and the results keep it with each window (TrialSpec.app_env)."""
NO_BINARY_WHEELS = {"psycopg[binary]": "psycopg"}
"""Requirements with no wheels for free-threaded CPython or PyPy, and what replaces them there."""


class EnvUnavailable(Exception):
    """The environment a cell asks for cannot be had: its first line is the table's reason."""


@dataclass(frozen=True)
class Asked:
    """An environment as one window's settings ask for it."""

    spec: EnvSpec
    interpreter: Interpreter | None
    pin: ExactPin | None


class StackEnvironments:
    """Builds (or reuses) each cell's environment; interpreters and pins resolved once per run."""

    def __init__(self, builder: EnvProvider, default_python: str,
                 on_note: Callable[[str], None] = lambda text: None) -> None:
        self.builder = builder
        self.default_python = default_python
        self.on_note = on_note
        self._unused: set[tuple[str, str]] = set()
        self._interpreters: dict[str, Interpreter] = {}
        self._pins: dict[str, ExactPin] = {}

    def ask(self, stack: Stack, trial: TrialSpec) -> Asked:
        interpreter = self._interpreter(trial.python) if trial.python else None
        pin_text = dict(trial.app_env).get(PIN_ENV) or trial.pin
        pin = self._pin(pin_text) if pin_text else None
        requirements, overrides = list(stack.requirements), list(stack.overrides)
        if interpreter is not None and (interpreter.free_threaded or interpreter.implementation == "pypy"):
            requirements = [_portable(r) for r in requirements]
        if pin is not None:
            requirements = [pin.requirement if _name(r) == pin.pin.name else r for r in requirements]
            overrides = [o for o in overrides if _name(o) != pin.pin.name] + [pin.requirement]
        spec = EnvSpec(tuple(requirements), tuple(sorted(overrides)),
                       interpreter.path if interpreter is not None else self.default_python,
                       pin.fingerprint if pin is not None else "", pin.rebuilt if pin is not None else ())
        return Asked(spec, interpreter, pin)

    def ensure(self, stack: Stack, trial: TrialSpec) -> BuiltEnv:
        """The environment, or EnvUnavailable with the cell's one-line reason."""
        try:
            asked = self.ask(stack, trial)
        except UserError as exc:
            raise EnvUnavailable(str(exc)) from exc
        if asked.pin is not None:
            try:  # the stack's own environment says whether it uses the package at all
                unpinned = replace(trial, pin=None, app_env=tuple(p for p in trial.app_env if p[0] != PIN_ENV))
                plain: BuiltEnv | None = self._build(self.ask(stack, unpinned), trial)
            except EnvUnavailable:
                plain = None  # (the catalog's pins may not install here while the pinned version does)
            if plain is not None and not uses(plain, asked.pin.pin.name):
                if (stack.id, asked.pin.pin.text) not in self._unused:
                    self._unused.add((stack.id, asked.pin.pin.text))
                    self.on_note(f"{stack.id} does not use {asked.pin.pin.name}: it runs unchanged at pin "
                                 f"{asked.pin.pin.text}")
                return plain
        return self._build(asked, trial)

    def _build(self, asked: Asked, trial: TrialSpec) -> BuiltEnv:
        try:
            return self.builder.ensure(asked.spec)
        except EnvBuildError as exc:
            if not (trial.python or trial.pin or PIN_ENV in dict(trial.app_env)):  # the catalog's own: as it always said
                raise EnvUnavailable(f"environment build failed: {exc}") from exc
            on = f" on {asked.interpreter.name}" if asked.interpreter is not None else ""
            raise EnvUnavailable(f"{install_problem(str(exc))}{on}\nenvironment build failed: {exc}") from exc

    def _interpreter(self, text: str) -> Interpreter:
        if text not in self._interpreters:
            self._interpreters[text] = resolve(text)
        return self._interpreters[text]

    def _pin(self, text: str) -> ExactPin:
        if text not in self._pins:  # a branch is read once: every launch of the run builds the same commit
            self._pins[text] = exact(text)
        return self._pins[text]


def uses(env: BuiltEnv, package: str) -> bool:
    """Whether the environment holds the (normalised) package: its freeze names it."""
    return any(_name(line) == package for line in env.record.freeze)


def unimportable(trial: TrialSpec, log_tail: str, status: TrialStatus, error: str) -> tuple[TrialStatus, str]:
    """A server that stopped on an import error in a cell that asked for an interpreter or a pin is
    left out of that cell, its reason first ('does not import: ImportError: ...')."""
    why = import_problem(log_tail) if trial.python or trial.pin else None
    return (TrialStatus.UNAVAILABLE, f"{why}\n{error}") if why else (status, error)


def _name(requirement: str) -> str:
    """The normalised distribution name a requirement or a `pip freeze` line starts with."""
    match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", requirement)
    return normalise(match.group(1)) if match else ""


def _portable(requirement: str) -> str:
    for binary, plain in NO_BINARY_WHEELS.items():
        if requirement.startswith(binary):
            return plain + requirement[len(binary):]
    return requirement
