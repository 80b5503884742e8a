"""The CPU split in the reports: columns only where a run has profiles (the terminal's in --wide),
and the HTML report's flame graph per stack beside its table."""

from __future__ import annotations

import csv
import io
import json
import re

from pywebbench.report.csv_format import render_csv
from pywebbench.report.html import render_html
from pywebbench.report.json_format import render_json
from pywebbench.report.markdown import render_markdown
from pywebbench.report.terminal import render_terminal
from pywebbench.results.model import ProfileRecord, ResultSet
from support.builders import header, trial
from support.profiles import profile

HEADERS = ("Kernel %", "Server %", "Framework %", "App %", "Rest %", "Profile ovh")


def _results(*profiles: ProfileRecord) -> ResultSet:
    return ResultSet(header(), (trial("flask:gunicorn-sync", 1000.0), trial("go:net-http", 3000.0)), complete=True,
                     profiles=profiles)


def test_the_split_is_a_column_each_in_markdown_and_in_the_wide_terminal_table() -> None:
    go = ProfileRecord(trial("go:net-http", 1.0).spec, "t0", "t1", unreadable="its server is not Python (go-reference)")
    results = _results(profile(), go)
    markdown = render_markdown(results)
    assert all(h in markdown for h in HEADERS)
    flask = next(line for line in markdown.splitlines() if line.startswith("| Flask "))
    assert "| 40% | 0% | 0% | 60% | 0% | -10.0% |" in flask
    go_line = next(line for line in markdown.splitlines() if line.startswith("| Go "))
    assert "| - | - | - | - | - | - |" in go_line  # not sampled: no figures, and said in the HTML fold
    wide = render_terminal(results, 300, wide=True)
    assert all(word in wide for word in ("Kernel", "Framework", "Rest", "ovh"))  # headers wrap between words
    fitted = render_terminal(results, 100)  # keeps its essential columns, and names the rest
    assert "#DB, Kernel %, Server %, Framework %, App %, Rest %, Profile ovh" in " ".join(fitted.split())
    assert all("Kernel" not in line for line in fitted.splitlines() if line.startswith(("┃", "│")))


def test_a_run_without_profiles_has_none_of_the_columns() -> None:
    results = _results()
    assert not any(h in render_markdown(results) for h in HEADERS)
    assert "Kernel" not in render_terminal(results, 300, wide=True)
    assert 'class="flame"' not in render_html(results, plotly_src="plotly.js")


def test_the_html_report_folds_a_flame_graph_per_stack_beside_its_table() -> None:
    go = ProfileRecord(trial("go:net-http", 1.0).spec, "t0", "t1", unreadable="its server is not Python (go-reference)")
    page = render_html(_results(profile(), go), plotly_src="plotly.js")
    folds = re.findall(r'<details class="flame"><summary>(.*?)</summary>', page)
    assert folds == ["go:net-http: not sampled: its server is not Python (go-reference)",  # the table's order
                     "flask:gunicorn-sync: 100 samples: kernel 40%, server 0%, framework 0%, app 60%, rest 0%; "
                     "sampling cost -10.0% req/s against the measured windows"]
    assert page.count('<svg xmlns="http://www.w3.org/2000/svg"') == 1  # the Go stack has no samples to draw
    assert "handle (app_flask.py): 60 samples, 60.0%" in page  # a frame's tooltip
    assert "<td>handle (app_flask.py)</td>" in page  # the top functions by own time
    assert page.count('<p class="legend">') == 1 and "rgb(90,175,95)" in page  # the app's colour, in the legend


def test_csv_and_json_carry_the_split_only_where_there_are_profiles() -> None:
    rows = {r["stack"]: r for r in csv.DictReader(io.StringIO(render_csv(_results(profile()))))}
    flask = rows["flask:gunicorn-sync"]
    assert (flask["cpu_kernel"], flask["cpu_app"], flask["profile_samples"], flask["profile_overhead"]) == \
        ("0.4", "0.6", "100", "-0.1")
    assert rows["go:net-http"]["cpu_kernel"] == ""
    assert "cpu_kernel" not in render_csv(_results()).splitlines()[0]
    document = json.loads(render_json(_results(profile())))
    assert document["profiles"][0]["split"] == [["kernel", 40], ["server", 0], ["framework", 0], ["app", 60],
                                                ["rest", 0]]
    assert "profiles" not in json.loads(render_json(_results()))
