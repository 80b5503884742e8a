"""The pin knob (issue 47 item 3): its values read (a specifier, a git ref, a local checkout; a list
split on commas with a specifier's own commas kept), refused in one line when they name nothing,
and made exact before an environment is built (a ref becomes the commit it names in a real git
repository made here, a checkout gets a fingerprint that moves when a file does)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from pywebbench.core.errors import UserError
from pywebbench.plan.pins import normalise, parse_pin, project_name, split_values
from pywebbench.plan.sweep import Knob, parse_knob
from pywebbench.stage.pinning import exact, split_git_url, tree_fingerprint


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True,
                          env=env).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A package `tinypkg` at two commits, tagged v1 and v2, v2 on branch main."""
    repo = tmp_path / "tinypkg"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "pyproject.toml").write_text('[project]\nname = "TinyPkg"\nversion = "1.0"\n')
    (repo / "tinypkg.py").write_text("VERSION = 1\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "one")
    _git(repo, "tag", "-a", "v1", "-m", "v1")  # annotated: its commit is the tag's ^{}
    (repo / "tinypkg.py").write_text("VERSION = 2\n")
    _git(repo, "commit", "-qam", "two")
    _git(repo, "tag", "v2")
    return repo


@pytest.mark.parametrize(("text", "pin_text", "name", "requirement"), [
    ("gunicorn==22.0.0", "gunicorn==22.0.0", "gunicorn", "gunicorn==22.0.0"),
    ("Flask_Login >= 0.6, < 0.7", "flask-login>=0.6,<0.7", "flask-login", "Flask_Login>=0.6,<0.7"),
    ("uvicorn[standard]~=0.30", "uvicorn[standard]~=0.30", "uvicorn", "uvicorn[standard]~=0.30"),
    ("granian@git+https://github.com/emmett-framework/granian@v2.0.0",
     "granian@git+https://github.com/emmett-framework/granian@v2.0.0", "granian",
     "granian @ git+https://github.com/emmett-framework/granian@v2.0.0"),
    ("granian @ git+ssh://git@github.com/emmett-framework/granian", "granian@git+ssh://git@github.com/emmett-framework/granian",
     "granian", "granian @ git+ssh://git@github.com/emmett-framework/granian"),
])
def test_requirements_are_read_and_normalised(text: str, pin_text: str, name: str, requirement: str) -> None:
    pin = parse_pin(text)
    assert (pin.text, pin.name, pin.requirement, pin.local) == (pin_text, name, requirement, None)


def test_a_local_checkout_is_named_by_its_pyproject(repo: Path) -> None:
    pin = parse_pin(str(repo))
    assert (pin.name, pin.requirement, pin.local) == ("tinypkg", f"TinyPkg @ {repo.as_uri()}", repo)
    assert parse_pin(f"tinypkg@{repo}").requirement == f"tinypkg @ {repo.as_uri()}"
    assert project_name(repo) == "TinyPkg"


@pytest.mark.parametrize(("text", "why"), [
    ("gunicorn", "names no version"),
    ("==22", "is not a requirement"),
    ("gunicorn@ftp.example/x", "after @ comes a URL"),
    ("/no/such/checkout", "is not a directory"),
])
def test_a_pin_of_no_form_is_refused_in_one_line(text: str, why: str) -> None:
    with pytest.raises(UserError) as refused:
        parse_pin(text)
    assert why in str(refused.value) and len(str(refused.value).splitlines()) == 1


def test_a_checkout_without_a_name_is_refused(tmp_path: Path) -> None:
    with pytest.raises(UserError, match=r"declares no name .*: write NAME@"):
        parse_pin(str(tmp_path))


def test_a_list_keeps_each_specifier_s_own_commas() -> None:
    assert split_values("gunicorn>=22,<23,gunicorn==23.0.0") == ["gunicorn>=22,<23", "gunicorn==23.0.0"]
    axis = parse_knob("pin=gunicorn==22.0.0, gunicorn==23.0.0,gunicorn==22.0.0")
    assert (axis.knob, axis.values) == (Knob.PIN, ("gunicorn==22.0.0", "gunicorn==23.0.0"))


def test_normalise_as_pypi_does() -> None:
    assert normalise("Flask_Login") == normalise("flask.login") == "flask-login"


def test_a_git_ref_becomes_the_commit_it_names(repo: Path) -> None:
    first, second = _git(repo, "rev-parse", "v1^{commit}"), _git(repo, "rev-parse", "v2")
    url = f"git+{repo.as_uri()}"
    assert exact(f"tinypkg@{url}@v1").requirement == f"tinypkg @ {url}@{first}"
    assert exact(f"tinypkg@{url}@main").requirement == f"tinypkg @ {url}@{second}"
    assert exact(f"tinypkg@{url}@{first[:8]}").requirement == f"tinypkg @ {url}@{first}"
    assert exact(f"tinypkg@{url}").requirement == f"tinypkg @ {url}@{second}"  # HEAD
    with pytest.raises(UserError, match=r"has no ref 'v3'$"):
        exact(f"tinypkg@{url}@v3")


def test_a_release_pin_is_taken_as_it_is() -> None:
    pinned = exact("gunicorn==22.0.0")
    assert (pinned.requirement, pinned.fingerprint, pinned.rebuilt) == ("gunicorn==22.0.0", "", ())


def test_a_checkout_s_fingerprint_moves_with_its_files_not_with_its_build_outputs(repo: Path) -> None:
    pinned = exact(str(repo))
    assert pinned.rebuilt == ("tinypkg",) and pinned.fingerprint == tree_fingerprint(repo)
    (repo / "build").mkdir()
    (repo / "build" / "out.o").write_text("x")
    assert tree_fingerprint(repo) == pinned.fingerprint
    (repo / "tinypkg.py").write_text("VERSION = 3  # a longer file\n")
    assert tree_fingerprint(repo) != pinned.fingerprint


@pytest.mark.parametrize(("source", "parts"), [
    ("git+https://github.com/x/y@feature/foo", ("https://github.com/x/y", "feature/foo", "")),
    ("git+ssh://git@github.com/x/y", ("ssh://git@github.com/x/y", "HEAD", "")),
    ("git+file:///tmp/r@v1#subdirectory=p", ("file:///tmp/r", "v1", "#subdirectory=p")),
])
def test_a_git_url_s_ref_is_after_the_last_at_of_its_path(source: str, parts: tuple[str, str, str]) -> None:
    assert split_git_url(source) == parts
