"""`pywebbench history append` and `history show` on a committed run (integration-light: no servers)."""

from __future__ import annotations

import shutil
import sqlite3
import subprocess
from pathlib import Path

import pytest

from pywebbench.cli import main
from pywebbench.results.history import HISTORY_SCHEMA_VERSION, read_history

RUN = Path(__file__).resolve().parents[2] / "docs" / "results" / "calibrate" / "interleaved" / "8"
COMMITS = ("1" * 40, "2" * 40)


def appended(tmp_path: Path) -> Path:
    history = tmp_path / "history.sqlite"
    for commit in COMMITS:
        assert main(["history", "append", str(RUN), "--history", str(history), "--commit", commit,
                     "--branch", "main"]) == 0
    return history


def test_append_twice_then_show_in_markdown_and_html(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    history = appended(tmp_path)
    entries = read_history(history).entries
    assert [e.commit for e in entries] == list(COMMITS) and entries[0].run_dir == "8"
    assert {r.stack for r in entries[0].rows} == {"flask:gunicorn-sync#A", "flask:gunicorn-sync#A2",
                                                  "flask:gunicorn-sync#B"}
    assert entries[0].machine.kind == "AMD EPYC, 2 CPUs"
    capsys.readouterr()

    assert main(["history", "show", str(history), "--format", "markdown", "--figure", "ratio"]) == 0
    markdown = capsys.readouterr().out
    assert "2 entries, 3 series, ratio to baseline" in markdown
    assert "### flask:gunicorn-sync#B / hello / 100 connections, 1 stack CPU" in markdown
    assert f"| 2 | `{COMMITS[1][:10]}` | main | 0.930 | [0.908, 0.952] | yes |  |" in markdown

    page = tmp_path / "history.html"
    assert main(["history", "show", str(history), "--format", "html", "-o", str(page)]) == 0
    html = page.read_text()
    assert html.count('class="plotly-graph-div"') == 3 and "flask:gunicorn-sync#A2" in html

    assert main(["history", "show", str(history), "--figure", "p99"]) == 0
    assert "p99 ms" in capsys.readouterr().out


def _refused(capsys: pytest.CaptureFixture[str], argv: list[str], says: str) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") == 1, err


def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = tmp_path / "notes.txt"
    text.write_text("a text file\n")
    _refused(capsys, ["history", "show", str(text)], "is not a pywebbench history")
    _refused(capsys, ["history", "append", str(RUN), "--history", str(text), "--commit", "c", "--branch", "b"],
             "is not a pywebbench history")
    _refused(capsys, ["history", "append", str(tmp_path), "--history", str(tmp_path / "h.sqlite"), "--commit", "c",
                      "--branch", "b"], "no results file at")
    assert not (tmp_path / "h.sqlite").exists()
    history = appended(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(["history", "show", str(history), "--figure", "throughput"])
    assert exit_info.value.code == 2 and "invalid choice: 'throughput'" in capsys.readouterr().err
    with sqlite3.connect(history) as conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(HISTORY_SCHEMA_VERSION + 1),))
    _refused(capsys, ["history", "show", str(history)], "upgrade pywebbench")


def test_an_unfinished_run_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run = tmp_path / "run"
    run.mkdir()
    lines = (RUN / "results.jsonl").read_text().splitlines(keepends=True)
    (run / "results.jsonl").write_text("".join(lines[:-1]))  # no end record: interrupted
    _refused(capsys, ["history", "append", str(run), "--history", str(tmp_path / "h.sqlite"), "--commit", "c",
                      "--branch", "b"], "did not finish")


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_commit_and_branch_default_to_the_checkout_here(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    _git(repo, "checkout", "-q", "-b", "perf-work")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "first")
    head = _git(repo, "rev-parse", "HEAD")
    monkeypatch.chdir(repo)
    history = tmp_path / "history.sqlite"
    assert main(["history", "append", str(RUN), "--history", str(history)]) == 0
    assert [(e.commit, e.branch) for e in read_history(history).entries] == [(head, "perf-work")]
    assert f"added 3 rows of 8 at {head} (perf-work)" in capsys.readouterr().err

    _git(repo, "checkout", "-q", "--detach")
    _refused(capsys, ["history", "append", str(RUN), "--history", str(history), "--commit", "other"],
             "give --branch NAME")
    monkeypatch.chdir(tmp_path)
    _refused(capsys, ["history", "append", str(RUN), "--history", str(history)], "give --commit SHA and --branch NAME")
