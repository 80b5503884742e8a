"""The python knob (issue 47 item 1): its values read (a version, a free-threaded build, an
implementation, a path; anything else refused in one line), and interpreters found where people
keep them, over a fake tree of installs: pyenv's versions, uv's, the cache's builds, PATH and a
system directory, each an executable stub that answers the probe as an interpreter would."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.interpreter_names import CPYTHON, PYPY, PythonWant, parse_python
from pywebbench.stage import interpreters
from pywebbench.stage.interpreters import Interpreter, choose, discover, resolve


def _stub(path: Path, line: str, real: Path | None = None) -> Path:
    """An executable that answers the probe with `line` (implementation, version, free-threaded,
    implementation version, in a venv) and its real path (itself unless told)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"#!/bin/sh\necho '{line} {real or path}'\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, object]:
    """pyenv 3.11.7 and 3.12.1, uv's 3.13.1, the cache's 3.14t, PATH's python3 (3.11.2) and pypy3, a
    venv's python on PATH (left out), /usr/bin's python3.11 (the same real file as PATH's), a broken one."""
    home, cache, bin_dir, system = tmp_path / "home", tmp_path / "cache", tmp_path / "bin", tmp_path / "usr-bin"
    _stub(home / ".pyenv/versions/3.11.7/bin/python3", "cpython 3.11.7 0 3.11.7 0")
    _stub(home / ".pyenv/versions/3.12.1/bin/python3", "cpython 3.12.1 0 3.12.1 0")
    _stub(home / ".local/share/uv/python/cpython-3.13.1-linux-x86_64-gnu/bin/python3", "cpython 3.13.1 0 3.13.1 0")
    _stub(cache / "pythons/3.14t/bin/python3.14t", "cpython 3.14.7 1 3.14.7 0")
    real = _stub(system / "python3.11", "cpython 3.11.2 0 3.11.2 0")
    (bin_dir).mkdir()
    (bin_dir / "python3").symlink_to(real)
    _stub(bin_dir / "pypy3", "pypy 3.9.16 0 7.3.11 0")
    _stub(tmp_path / "venv/bin/python", "cpython 3.11.2 0 3.11.2 1")
    (bin_dir / "python").symlink_to(tmp_path / "venv/bin/python")
    broken = bin_dir / "python2"
    broken.write_text("#!/bin/sh\nexit 3\n")
    broken.chmod(0o755)
    monkeypatch.setattr(interpreters, "SYSTEM_DIRS", (system,))
    found = discover(path_env=str(bin_dir), home=home, cache=cache, env={"PATH": str(bin_dir)})
    return {"found": found, "home": home, "bin": bin_dir}


def test_every_place_is_searched_each_interpreter_once_and_venvs_and_broken_ones_left_out(
        machine: dict[str, object]) -> None:
    found = machine["found"]
    assert isinstance(found, tuple)
    assert [(i.name, i.where) for i in found] == [
        ("3.11.2", "PATH"), ("3.11.7", "pyenv"), ("3.12.1", "pyenv"), ("3.13.1", "uv"), ("3.14.7t", "pywebbench"),
        ("pypy3.9.16 (PyPy 7.3.11)", "PATH")]
    assert next(i for i in found if i.where == "PATH" and i.implementation == CPYTHON).path.endswith("bin/python3")


@pytest.mark.parametrize(("text", "name"), [
    ("3.11", "3.11.7"),  # the newest 3.11
    ("3.11.2", "3.11.2"),
    ("3", "3.13.1"),  # the newest CPython with the GIL
    ("python3.12", "3.12.1"),
    ("cpython3.13", "3.13.1"),
    ("3.14t", "3.14.7t"),
    ("pypy3", "pypy3.9.16 (PyPy 7.3.11)"),
    ("pypy", "pypy3.9.16 (PyPy 7.3.11)"),
    ("PyPy3.9", "pypy3.9.16 (PyPy 7.3.11)"),
])
def test_a_value_names_the_newest_matching_interpreter(machine: dict[str, object], text: str, name: str) -> None:
    found = machine["found"]
    assert isinstance(found, tuple)
    assert resolve(text, found).name == name


def test_a_path_is_used_as_it_is(machine: dict[str, object], tmp_path: Path) -> None:
    exe = _stub(tmp_path / "opt/python3.10", "cpython 3.10.4 0 3.10.4 0")
    chosen = resolve(str(exe), ())
    assert (chosen.path, chosen.name, chosen.where) == (str(exe), "3.10.4", "given")
    with pytest.raises(UserError, match=r"^python: /nowhere/python3 is not an interpreter that runs here$"):
        resolve("/nowhere/python3", ())


def test_an_interpreter_not_found_is_refused_in_one_line_listing_what_was_found(machine: dict[str, object]) -> None:
    found = machine["found"]
    assert isinstance(found, tuple)
    with pytest.raises(UserError) as refused:
        resolve("3.15", found)
    assert str(refused.value) == ("python: no interpreter here is 3.15; found: 3.11.2, 3.11.7, 3.12.1, 3.13.1, "
                                  "3.14.7t, pypy3.9.16 (PyPy 7.3.11)")
    with pytest.raises(UserError, match=r"no interpreter here is 3.13t \(`pywebbench python install 3.13t` builds it\)"):
        resolve("3.13t", found)


def test_two_installs_of_one_version_prefer_the_cache_then_pyenv_then_uv_then_path() -> None:
    def at(where: str) -> Interpreter:
        return Interpreter(f"/{where}/python3", CPYTHON, (3, 12, 1), False, where, f"/{where}/real")
    found = [at("PATH"), at("uv"), at("pyenv")]
    chosen = choose(parse_python("3.12"), found)
    assert chosen is not None and chosen.where == "pyenv"
    assert choose(parse_python("3.12"), [at("/usr/bin"), at("PATH")]) == at("PATH")


@pytest.mark.parametrize(("text", "want"), [
    ("3.12", PythonWant("3.12", CPYTHON, (3, 12))),
    (" 3.14T ", PythonWant("3.14t", CPYTHON, (3, 14), True)),
    ("pypy3", PythonWant("pypy3", PYPY, (3,))),
    ("PYPY", PythonWant("pypy", PYPY, ())),
    ("python3.11.7", PythonWant("3.11.7", CPYTHON, (3, 11, 7))),
    ("/usr/bin/python3.11", PythonWant("/usr/bin/python3.11", path="/usr/bin/python3.11")),
])
def test_values_are_read_and_normalised(text: str, want: PythonWant) -> None:
    assert parse_python(text) == want


@pytest.mark.parametrize("text", ["", "t", "3.x", "jython", "pypy3t", "3.11-dev", "python"])
def test_a_value_of_no_form_is_refused_in_one_line(text: str) -> None:
    with pytest.raises(UserError) as refused:
        parse_python(text)
    assert len(str(refused.value).splitlines()) == 1 and str(refused.value).startswith("python: ")


def test_the_real_machine_is_searched_without_error() -> None:
    """This machine's own interpreters: at least the one running the tests is found (unless a venv's)."""
    found = discover()
    assert all(os.access(i.path, os.X_OK) for i in found)
    assert len({i.real for i in found}) == len(found)
