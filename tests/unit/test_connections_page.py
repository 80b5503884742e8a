"""docs/connections.md (report/pages/connections.py): 'not measured yet' with the commands until
results are committed; then each part's tables with every figure's interval, the sentences per
worker model written from the figures, the skipped lines, the protocols, the ceilings and the
commands."""

from __future__ import annotations

from pathlib import Path

from pywebbench.report.pages import PAGES, connections
from pywebbench.results.model import ServiceRecord
from support.shape_results import idle_windows, protocol_windows, write_part

IDLE_COMMAND = "pywebbench run --workload idle --knob connections=100,1000"


def test_without_results_the_page_says_not_measured_yet_and_how_to_measure() -> None:
    for results in (Path("/nonexistent"), Path(__file__).parent):
        text = connections.render(results)
        assert "## Not measured yet" in text
        for part in connections.PARTS:
            assert f"scripts/connections-page {part.name}" in text
    assert PAGES["connections.md"] is connections.render


def _committed(tmp_path: Path) -> str:
    folder = tmp_path / connections.FOLDER
    ceiling = ServiceRecord("shape-ceiling", "shapes", {"workload": "idle", "connections": 1000, "rps": 200.1,
                                                        "p99_ms": 0.41, "held": 1000, "generator": "shapes"})
    write_part(folder / "idle", idle_windows(), command=IDLE_COMMAND, services=(ceiling,))
    write_part(folder / "protocols", protocol_windows(), command="pywebbench run --knob protocol=h1,h2c,h2-tls",
               skipped=("skipped starlette:hypercorn h1-tls: Hypercorn serves h1, h2c and h2-tls",))
    return connections.render(tmp_path)


def test_idle_tables_show_each_figure_with_its_interval_and_the_counts(tmp_path: Path) -> None:
    text = _committed(tmp_path)
    assert "### idle, 1,000 connections" in text and "### idle, 100 connections" in text
    loop = next(line for line in text.splitlines() if line.startswith("| `starlette:uvicorn` | event loop")
                and "1,000/0/0 of 1,000" in line)
    # RSS per connection with its t interval, 3 launches; valid, with the checks its windows raised
    assert "3.0 [" in loop and "| 3 | yes" in loop
    sync = next(line for line in text.splitlines() if line.startswith("| `flask:gunicorn-sync` | sync")
                and "of 1,000" in line)
    assert "0/1,000/0 of 1,000" in sync
    assert "File limits at 1,000 connections, as each window read them: the driver ran with 1,064 (RLIMIT_NOFILE), " \
        "the servers with 20,000." in text


def test_the_worker_model_sentences_come_from_the_figures(tmp_path: Path) -> None:
    text = _committed(tmp_path)
    at_1000 = next(line for line in text.splitlines() if line.startswith("- **1,000 idle connections.**"))
    assert "Sync (`flask:gunicorn-sync`): held as few as 0 of 1,000 (up to 1,000 refused)" in at_1000
    assert "Event loop (`starlette:uvicorn`): held all 1,000 idle connections; RSS per idle connection 3.0 KB" \
        in at_1000


def test_protocols_skips_ceilings_commands_and_the_parts_not_run(tmp_path: Path) -> None:
    text = _committed(tmp_path)
    h2c = next(line for line in text.splitlines() if line.startswith("| `starlette:granian` | h2c |"))
    assert "8,002 [" in h2c  # 8,001-8,003 over three launches
    assert "- skipped starlette:hypercorn h1-tls: Hypercorn serves h1, h2c and h2-tls" in text
    assert "| idle | shape-ceiling | shapes | idle | 1000 | 200 | 0.41 | held 1,000 |" in text
    assert f"`{IDLE_COMMAND}` (exit 0, 2 min 05 s" in text
    assert "Not measured yet: `scripts/connections-page ws-echo`." in text
    assert "## Not measured yet" not in text
