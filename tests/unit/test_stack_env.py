"""Each cell's environment (issue 47 items 1 and 3): the interpreter and the pin a window asks for
applied to the stack's requirements, a stack that does not use the pinned package running
unchanged, and the one-line reason a cell cannot have its environment, read from what uv said
here (the messages below are uv's own, from this machine's builds on PyPy 3.9 and 3.14t)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from pywebbench.catalog.registry import build_catalog
from pywebbench.measure import stack_env
from pywebbench.measure.stack_env import EnvUnavailable, StackEnvironments
from pywebbench.results.model import EnvironmentRecord, TrialSpec
from pywebbench.stage.envs import BuiltEnv, EnvBuildError, EnvSpec
from pywebbench.stage.interpreters import Interpreter
from pywebbench.stage.skip_reasons import import_problem, install_problem

SPEC = TrialSpec("t", "flask:gunicorn-sync", "hello", 10, 1.0, 0.0, 1, "wrk")
FREE = Interpreter("/c/3.14t/bin/python3.14t", "cpython", (3, 14, 7), True, "pywebbench", "/c/python3.14t")
PYPY = Interpreter("/usr/bin/pypy3", "pypy", (3, 9, 16), False, "PATH", "/usr/lib/pypy3.9/pypy3.9", "7.3.11")
PY312 = Interpreter("/p/3.12.1/bin/python3", "cpython", (3, 12, 1), False, "pyenv", "/p/3.12.1/bin/python3.12")

UV_NO_FREE_THREADED_WHEEL = (
    "/x/uv pip install failed: error: No solution found when resolving dependencies |   cause: Because "
    "psycopg-binary{implementation_name != 'pypy'}==3.3.9 has no wheels with a free-threading compatible ABI tag and "
    "psycopg[binary]>=3.3.9 depends on psycopg-binary{implementation_name != 'pypy'}==3.3.9, we can conclude that "
    "psycopg[binary]>=3.3.9 cannot be used. | hint: You require free-threaded CPython 3.14 (`cp314t`), but we only "
    "found wheels for `psycopg-binary` (v3.3.9) with the following Python ABI tags: `cp310`, `cp311`, `cp312`")
UV_NEEDS_PYTHON = (
    "/x/uv pip install failed: error: No solution found when resolving dependencies |   cause: Because the current "
    "Python version (3.9.16) does not satisfy Python>=3.10 and gunicorn==27.0.1 depends on Python>=3.10, we can "
    "conclude that gunicorn==27.0.1 cannot be used.")
UV_FAILED_BUILD = ("/x/uv pip install failed: × Failed to build `bjoern==3.2.2` | ├─▶ The build backend returned an "
                   "error | ╰─▶ Call to `setuptools.build_meta.build_wheel` failed (exit status: 1)")


@pytest.mark.parametrize(("message", "line"), [
    (UV_NO_FREE_THREADED_WHEEL, "psycopg-binary 3.3.9: no build for cp314t"),
    (UV_NEEDS_PYTHON, "gunicorn==27.0.1: needs Python>=3.10, this is 3.9.16"),
    (UV_FAILED_BUILD, "bjoern==3.2.2: does not build on this interpreter"),
    ("uv build --quiet --wheel failed: meinheld/server/server.c: error: 'PyFrameObject' has no member",
     "meinheld (rebuilt for greenlet 3): does not build on this interpreter"),
    ("something else | the last line says it", "the last line says it"),
])
def test_an_install_failure_is_one_line(message: str, line: str) -> None:
    assert install_problem(message) == line


def test_an_import_failure_in_a_server_log_is_one_line() -> None:
    tail = "Traceback (most recent call last):\n  File \"x\", line 1\nImportError: cannot import name 'x' from 'y'\n"
    assert import_problem(tail) == "does not import: ImportError: cannot import name 'x' from 'y'"
    assert import_problem("[INFO] Booting worker") is None
    argparse = "usage: gunicorn [OPTIONS] [APP_MODULE]\ngunicorn: error: unrecognized arguments: --no-control-socket\n"
    assert import_problem(argparse) == "does not take --no-control-socket (a flag of the catalog's command line)"
    assert import_problem("Usage: uvicorn [OPTIONS] APP\nError: No such option: --h11-max-incomplete-event-size") \
        == "does not take --h11-max-incomplete-event-size (a flag of the catalog's command line)"


class FakeBuilder:
    """Remembers what it was asked; fails for the requirements named in `fails`; freezes the rest."""

    def __init__(self, fails: dict[str, str] | None = None) -> None:
        self.asked: list[EnvSpec] = []
        self.fails = fails or {}

    def ensure(self, spec: EnvSpec, *, retry_failed: bool = False) -> BuiltEnv:
        self.asked.append(spec)
        for requirement, message in self.fails.items():
            if requirement in spec.requirements:
                raise EnvBuildError(message)
        freeze = tuple(r.replace("[binary]", "") for r in spec.requirements)
        return BuiltEnv(Path("/env") / spec.python.strip("/"),
                        EnvironmentRecord("h", spec.python, spec.requirements, spec.overrides, freeze), reused=False)


@pytest.fixture
def envs(monkeypatch: pytest.MonkeyPatch) -> tuple[StackEnvironments, FakeBuilder, list[str]]:
    found = {"3.14t": FREE, "pypy3": PYPY, "3.12": PY312}
    monkeypatch.setattr(stack_env, "resolve", lambda text: found[text])
    builder, notes = FakeBuilder(), []
    return StackEnvironments(builder, "/usr/bin/python3", notes.append), builder, notes


def test_the_interpreter_asked_for_builds_the_environment(envs: tuple[StackEnvironments, FakeBuilder, list[str]]) -> None:
    environments, builder, _ = envs
    stack = build_catalog().resolve("flask:gunicorn-sync")
    environments.ensure(stack, dataclasses.replace(SPEC, python="3.12"))
    environments.ensure(stack, SPEC)
    assert [s.python for s in builder.asked] == [PY312.path, "/usr/bin/python3"]
    assert builder.asked[0].requirements == builder.asked[1].requirements == stack.requirements


@pytest.mark.parametrize("python", ["3.14t", "pypy3"])
def test_psycopg_binary_becomes_its_pure_python_build_where_it_has_no_wheels(
        envs: tuple[StackEnvironments, FakeBuilder, list[str]], python: str) -> None:
    environments, builder, _ = envs
    stack = build_catalog().resolve("flask:gunicorn-sync")
    environments.ensure(stack, dataclasses.replace(SPEC, python=python))
    asked = builder.asked[0].requirements
    assert "psycopg==3.3.9" in asked and not any(r.startswith("psycopg[binary]") for r in asked)


def test_a_pin_replaces_the_catalog_s_requirement_and_overrides_it(
        envs: tuple[StackEnvironments, FakeBuilder, list[str]]) -> None:
    environments, builder, notes = envs
    stack = build_catalog().resolve("flask:gunicorn-sync")
    env = environments.ensure(stack, dataclasses.replace(SPEC, pin="gunicorn==22.0.0"))
    pinned = builder.asked[-1]
    assert "gunicorn==22.0.0" in pinned.requirements and "gunicorn==27.0.1" not in pinned.requirements
    assert "gunicorn==22.0.0" in pinned.overrides
    assert env.record.requirements == pinned.requirements and notes == []


def test_a_stack_that_does_not_use_the_pinned_package_runs_unchanged_said_once(
        envs: tuple[StackEnvironments, FakeBuilder, list[str]]) -> None:
    environments, builder, notes = envs
    stack = build_catalog().resolve("starlette:uvicorn")
    for _ in range(2):
        env = environments.ensure(stack, dataclasses.replace(SPEC, stack_id=stack.id, pin="gunicorn==22.0.0"))
        assert env.record.requirements == stack.requirements and env.record.overrides == stack.overrides
    assert notes == ["starlette:uvicorn does not use gunicorn: it runs unchanged at pin gunicorn==22.0.0"]


def test_a_cell_whose_environment_does_not_install_says_why_in_its_first_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stack_env, "resolve", lambda text: PYPY)
    environments = StackEnvironments(FakeBuilder({"gunicorn==27.0.1": UV_NEEDS_PYTHON}), "/usr/bin/python3")
    with pytest.raises(EnvUnavailable) as unavailable:
        environments.ensure(build_catalog().resolve("flask:gunicorn-sync"), dataclasses.replace(SPEC, python="pypy3"))
    first, rest = str(unavailable.value).split("\n", 1)
    assert first == "gunicorn==27.0.1: needs Python>=3.10, this is 3.9.16 on pypy3.9.16 (PyPy 7.3.11)"
    assert UV_NEEDS_PYTHON in rest


def test_the_catalog_s_own_environment_fails_as_it_always_said(monkeypatch: pytest.MonkeyPatch) -> None:
    environments = StackEnvironments(FakeBuilder({"gunicorn==27.0.1": "uv failed: boom"}), "/usr/bin/python3")
    with pytest.raises(EnvUnavailable, match=r"^environment build failed: uv failed: boom$"):
        environments.ensure(build_catalog().resolve("flask:gunicorn-sync"), SPEC)


def test_a_pin_that_installs_where_the_catalog_s_version_does_not_is_used(monkeypatch: pytest.MonkeyPatch) -> None:
    """On PyPy 3.9 the catalog's gunicorn needs 3.10; a pinned older one is not refused for it."""
    monkeypatch.setattr(stack_env, "resolve", lambda text: PYPY)
    builder = FakeBuilder({"gunicorn==27.0.1": UV_NEEDS_PYTHON})
    environments = StackEnvironments(builder, "/usr/bin/python3")
    env = environments.ensure(build_catalog().resolve("flask:gunicorn-sync"),
                              dataclasses.replace(SPEC, python="pypy3", pin="gunicorn==22.0.0"))
    assert "gunicorn==22.0.0" in env.record.requirements
