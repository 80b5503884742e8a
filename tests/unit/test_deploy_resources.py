"""A tuning run's deploy line as it will be deployed (issue 48 item 3): under --cpu-quota its
Kubernetes `resources:` block (the quota, the memory high-water mark with headroom), and with
--target-rate the pods of the winner's capacity, with its bracket's."""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

import pytest

from pywebbench.analyze.ratesearch import Capacity
from pywebbench.analyze.tuning import Tuning, decide_capacity, deployment_sizing, rank, tuning_of
from pywebbench.analyze.tuning_search import ClassSpace, Stage
from pywebbench.catalog.deploy import kubernetes_resources, pods_needed
from pywebbench.core.errors import UserError
from pywebbench.report.tuning import render_tuning, render_tuning_markdown
from pywebbench.results.store import ResultsWriter, load_results, results_path
from pywebbench.jobs.tune import check_slo_flag
from support.builders import header

SYNC = ClassSpace("flask:gunicorn-sync", "Gunicorn", "sync", threaded=False, single_process=False)
ONE, TWO = SYNC.config(1, 1), SYNC.config(2, 1)
DEPLOY = "gunicorn --bind 0.0.0.0:8000 --workers 2 app_flask:wsgi"


def test_the_resources_block_is_the_quota_and_the_high_water_mark_with_headroom() -> None:
    assert kubernetes_resources(0.5, 180.3).splitlines() == [
        "resources:  # measured under a 0.5-CPU quota; memory: its 180 MiB high-water mark + 25%",
        "  requests: {cpu: 500m, memory: 226Mi}",
        "  limits: {cpu: 500m, memory: 226Mi}",
    ]
    assert kubernetes_resources(1.5, None).splitlines()[1:] == ["  requests: {cpu: 1500m}", "  limits: {cpu: 1500m}"]


def test_pods_are_the_target_over_the_capacity_rounded_up_at_each_end_of_its_bracket() -> None:
    assert pods_needed(1000.0, 400.0, (380.0, 420.0)) == \
        "3 pod(s) for 1,000 req/s at 400 req/s each (its bracket [380, 420): 3 to 3)"
    assert pods_needed(1000.0, 250.0, (240.0, 260.0)).endswith("(its bracket [240, 260): 4 to 5)")
    assert pods_needed(800.0, 400.0, None) == "2 pod(s) for 800 req/s at 400 req/s each"


def _tuning() -> Tuning:
    stage = Stage("workers", (ONE, TWO), (ONE, TWO))
    outcome = decide_capacity(stage, {ONE: Capacity(300.0, 320.0, (), "resolved"),
                                      TWO: Capacity(400.0, 420.0, (), "resolved")}, {})
    ranked = rank([outcome])
    ranked = tuple(replace(r, measured=replace(r.measured, rss_mb=80.0)) for r in ranked)
    deploy = ((TWO.label, DEPLOY),)
    return Tuning("p99<100ms", "hello", (), ranked, (), deploy=deploy,
                  **deployment_sizing(ranked, {TWO.label}, 0.5, 1000.0))


def test_the_deploy_line_carries_resources_and_pods_in_each_format(tmp_path: Path) -> None:
    tuning = _tuning()
    assert [label for label, _ in tuning.resources] == [label for label, _ in tuning.pods] == [TWO.label]
    terminal = render_tuning(tuning)
    assert f"  {TWO.label}: {DEPLOY}\n    resources:  # measured under a 0.5-CPU quota" in terminal
    assert "    requests: {cpu: 500m, memory: 100Mi}" in terminal
    assert "    # 3 pod(s) for 1,000 req/s at 400 req/s each" in terminal
    markdown = render_tuning_markdown(tuning)
    assert "  ```yaml\n  resources:" in markdown and "  limits: {cpu: 500m, memory: 100Mi}" in markdown
    run_dir = tmp_path / "run"
    writer = ResultsWriter(results_path(run_dir), header())
    writer.add_tuning(asdict(tuning))
    writer.finish("complete")
    writer.close()
    assert tuning_of(load_results(run_dir)) == tuning  # stored and read back whole


def test_without_a_quota_or_a_target_the_deploy_line_is_the_command_alone() -> None:
    tuning = _tuning()
    bare = replace(tuning, **deployment_sizing(tuning.ranked, {TWO.label}, None, None))
    assert bare.resources == () and bare.pods == ()
    assert "resources:" not in render_tuning(bare) and "```yaml" not in render_tuning_markdown(bare)


@pytest.mark.parametrize(("slo", "tune"), [(None, True), ("p99<100ms", False), (None, False)])
def test_a_target_rate_needs_tune_and_an_slo(slo: str | None, tune: bool) -> None:
    with pytest.raises(UserError) as caught:
        check_slo_flag(slo, tune, 1000.0)
    assert "add --tune" in str(caught.value) and "\n" not in str(caught.value)  # --slo's own refusal comes first
    check_slo_flag("p99<100ms", True, 1000.0)
