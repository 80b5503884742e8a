"""docs/real-apps.md reads each app's answer, checks and command off its committed run."""

from __future__ import annotations

import json
from pathlib import Path

from pywebbench.report.pages import real_apps


def test_without_runs_each_app_says_how_to_run_it(tmp_path: Path) -> None:
    text = real_apps.render(tmp_path)
    for name, _ in real_apps.APPS:
        assert f"Not run yet: `scripts/real-apps {name}`." in text
        assert f"| {name} | | not run yet | | |" in text


def _tuning() -> dict[str, object]:
    def entry(rank: int, server: str, worker_class: str, workers: int, value: float, tied: bool) -> dict[str, object]:
        config = {"stack": f"app:{worker_class}", "server": server, "worker_class": worker_class,
                  "workers": workers, "threads": 1}
        return {"rank": rank, "tied": tied, "measured": {"config": config, "value": value,
                                                         "interval": [value, value * 1.05], "cpu_ms_per_req": 1.5,
                                                         "rss_mb": 80.0}}
    return {"objective": "p99<100ms", "ranked": [entry(1, "Gunicorn", "sync", 3, 900.0, True),
                                                 entry(2, "Gunicorn", "sync", 2, 880.0, True),
                                                 entry(3, "Granian", "granian-wsgi", 1, 700.0, False)],
            "deploy": [["app:sync#w3t1", "gunicorn --workers 3 httpbin:app"]],
            "notes": ["capacity: the highest offered rate (open loop, vegeta) whose corrected p99 stayed under 100 ms"]}


def test_a_run_shows_each_class_best_the_deploy_line_and_each_difference(tmp_path: Path) -> None:
    folder = tmp_path / real_apps.FOLDER / "httpbin"
    folder.mkdir(parents=True)
    (folder / "run.json").write_text(json.dumps({"schema": 1, "app": "httpbin", "exit": 0, "wall_s": 725,
                                                 "started_at": "2026-11-26T23:50:00Z", "commit": "abc1234",
                                                 "budget": "12m", "command": "pywebbench app --app httpbin:app"}))
    (folder / "tuning.json").write_text(json.dumps(_tuning()))
    (folder / "console.txt").write_text("plan: ...\napp:granian-wsgi answers GET /get differently from "
                                        "app:gunicorn-sync: headers.X: 'a' != 'b'\n")
    text = real_apps.render(tmp_path)
    assert "| httpbin | ? | 12 min 05 s | 1 | Gunicorn sync, 3 x 1: 900 req/s |" in text
    assert "| 1 | Gunicorn | sync | 3 x 1 | 900 req/s | [900, 945) |" in text
    assert "| 2 | Gunicorn | sync |" not in text  # one row per class: its best
    assert "| 3 | Granian | granian-wsgi | 1 x 1 | 700 req/s |" in text
    assert "```sh\ngunicorn --workers 3 httpbin:app\n```" in text
    assert "(open loop, vegeta)" in text
    assert "- app:granian-wsgi answers GET /get differently from app:gunicorn-sync: headers.X: 'a' != 'b'" in text
    assert "Not run yet: `scripts/real-apps datasette`." in text


def test_the_committed_runs_each_answer_per_class_with_no_false_difference() -> None:
    results = Path(__file__).resolve().parents[2] / "docs" / "results"
    text = real_apps.render(results)
    for name, _ in real_apps.APPS:
        assert f"Not run yet: `scripts/real-apps {name}`" not in text
        row = next(line for line in text.splitlines() if line.startswith(f"| {name} |"))
        assert row.split(" | ")[3] == "0"  # no "answers differently" line printed
    assert text.count("no server answered differently") == 3


def test_a_bracket_says_why_it_has_no_upper_end() -> None:
    from pywebbench.report.tuning import capacity_bracket
    assert capacity_bracket((283.04, 295.57), "resolved") == "[283, 296)"
    assert capacity_bracket(None, "max-rate") == "beyond the search's top"
    assert capacity_bracket(None, "budget") == "no probe failed before the search was cut"
