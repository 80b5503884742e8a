"""docs/containers.md: five stacks as a container runs them (issue 48), under a CPU quota of 0.5,
1 and 1.5, the worker count each server picks for itself (workers=auto) against the best fixed
count, rendered from what scripts/containers-page kept under docs/results/containers/WORKLOAD/:
results.jsonl (each window's cgroup: throttled time, memory high-water mark; each auto launch's
sizing: the count it chose and the CPUs it saw) and run.json (the command, its exit, wall time).

Every req/s is the mean of the configuration's launch means with a Student-t 95% interval over
them; the auto-vs-tuned ratio is the geometric means' with Welch's interval (stats.ratio_ci)."""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pywebbench.analyze.rows import latest_trials
from pywebbench.analyze.stats import Aggregation, aggregate_ci, ratio_centre, ratio_ci
from pywebbench.measure.sizing import sized_from_host
from pywebbench.plan.knob_values import knob_words
from pywebbench.report.markdown import escape
from pywebbench.report.pages.page_runs import load_part, machine_and_commands
from pywebbench.results.model import TrialResult, TrialStatus
from pywebbench.results.server import AUTO_WORKERS, WorkerSizing

FOLDER = "containers"
SCRIPT = "scripts/containers-page"
WORKLOADS = ("hello", "db")
STACKS = ("flask:gunicorn-sync", "flask:gunicorn-gthread", "starlette:uvicorn", "starlette:granian",
          "django:gunicorn-sync")
"""The page's order: Gunicorn's sync and threaded workers, two event-loop servers, Django."""
SLO_MS = 100.0
EQUIVALENCE = 0.05
"""A ratio whose interval lies within 1/(1+5%)..1+5% is equivalent (the harness's default margin)."""


@dataclass(frozen=True)
class Config:
    """One stack on one workload at one quota and one worker count, over its launches."""

    label: str
    workload: str
    quota: float | None
    workers: int
    """AUTO_WORKERS for the server's own count."""
    launch_rps: tuple[float, ...]
    p99_ms: float | None
    """The median of its windows' p99."""
    throttled_ms_per_s: float | None
    throttled_share: float | None
    """Throttled CFS periods over all periods it ran in."""
    peak_mb: float | None
    sizing: WorkerSizing | None
    load_words: str  # "100 connections": the closed loop it ran at, in the knob's words
    failed: tuple[str, ...]
    """The statuses of windows that did not finish ok."""

    @property
    def rps(self) -> float | None:
        return statistics.fmean(self.launch_rps) if self.launch_rps else None

    @property
    def rps_ci(self) -> tuple[float, float] | None:
        return aggregate_ci(self.launch_rps, Aggregation.MEAN)

    @property
    def meets_slo(self) -> bool:
        return self.p99_ms is not None and self.p99_ms < SLO_MS

    @property
    def count(self) -> str:
        if self.workers != AUTO_WORKERS:
            return str(self.workers)
        return f"auto {self.sizing.workers}" if self.sizing else "auto ?"


@dataclass(frozen=True)
class Pair:
    """A stack's own count against the best fixed one, at one workload and quota."""

    auto: Config
    tuned: Config | None
    ratio: float | None
    """tuned / auto req/s (geometric means of the launch means)."""
    ratio_ci: tuple[float, float] | None
    verdict: str
    tried: tuple[int, ...] = ()
    """The fixed counts measured: a tuned count equal to the largest may not be the best."""

    @property
    def largest(self) -> int | None:
        return max(self.tried, default=None)


def render(results: Path) -> str:
    folder = results / FOLDER
    runs = {w: found for w in WORKLOADS if (found := load_part(folder / w)) is not None}
    parts = [_intro()]
    if not runs:
        parts.append(_not_yet())
    else:
        parts.append(machine_and_commands(runs))
        for workload, results_set in ((w, part.results) for w, part in runs.items()):
            pairs = pairs_of(configs(results_set.trials, workload))
            parts.append(_section(workload, pairs))
    return "\n\n".join(parts).rstrip() + "\n"


def configs(trials: Iterable[TrialResult], workload: str) -> list[Config]:
    """Every stack x quota x worker count of one workload, from its windows."""
    groups: dict[tuple[str, float | None, int], list[TrialResult]] = defaultdict(list)
    for trial in latest_trials(tuple(trials)):
        if trial.spec.workload == workload:
            workers = AUTO_WORKERS if trial.spec.workers is None else trial.spec.workers
            groups[(trial.spec.stack_id, trial.spec.cpu_quota, workers)].append(trial)
    return [_config(label, workload, quota, workers, windows) for (label, quota, workers), windows in groups.items()]


def _config(label: str, workload: str, quota: float | None, workers: int, windows: list[TrialResult]) -> Config:
    ok = [t for t in windows if t.status is TrialStatus.OK and t.load is not None]
    by_launch: dict[int, list[float]] = defaultdict(list)
    for t in ok:
        assert t.load is not None
        by_launch[t.spec.launch].append(t.load.rps)
    p99s = [p for t in ok if t.load is not None and (p := t.load.latency.at(99.0)) is not None]
    cgroups = [(t.server_cgroup, t.load.duration_s) for t in ok if t.server_cgroup is not None and t.load is not None]
    throttled = [(c.throttled_s, s) for c, s in cgroups if c.throttled_s is not None and s > 0]
    periods = [(c.throttled_periods, c.periods) for c, _ in cgroups
               if c.throttled_periods is not None and c.periods]
    peaks = [c.peak_memory_mb for c, _ in cgroups if c.peak_memory_mb is not None]
    sizing = next((t.stack.sizing for t in windows if t.stack.sizing is not None), None)
    return Config(
        label, workload, quota, workers,
        tuple(statistics.fmean(v) for _, v in sorted(by_launch.items())),
        statistics.median(p99s) if p99s else None,
        1000.0 * sum(t for t, _ in throttled) / sum(s for _, s in throttled) if throttled else None,
        sum(t for t, _ in periods) / sum(p for _, p in periods if p) if periods else None,
        max(peaks) if peaks else None, sizing, str(knob_words(windows[0].spec, "connections")),
        tuple(str(t.status) for t in windows if t.status is not TrialStatus.OK))


def tuned_of(fixed: Sequence[Config]) -> Config | None:
    """The best fixed count: the highest req/s among those whose p99 held the SLO, else the highest."""
    measured = [c for c in fixed if c.rps is not None]
    holding = [c for c in measured if c.meets_slo]
    return max(holding or measured, key=lambda c: c.rps or 0.0, default=None)


def verdict(ci: tuple[float, float] | None) -> str:
    """Between the tuned row and the auto row, from the interval of tuned / auto."""
    if ci is None:
        return "no interval (under 2 launches a side)"
    low, high = ci
    if low >= 1.0 / (1.0 + EQUIVALENCE) and high <= 1.0 + EQUIVALENCE:
        return "equivalent"
    if low > 1.0:
        return "tuned higher"
    if high < 1.0:
        return "auto higher"
    return "unresolved"


def pairs_of(found: Sequence[Config]) -> list[Pair]:
    """Each stack x quota's auto row against its tuned row, in the page's order."""
    cells: dict[tuple[str, float | None], list[Config]] = defaultdict(list)
    for c in found:
        cells[(c.label, c.quota)].append(c)
    order = {label: i for i, label in enumerate(STACKS)}
    pairs = []
    for (label, quota), group in sorted(cells.items(), key=lambda kv: (order.get(kv[0][0], len(order)), kv[0][0],
                                                                         kv[0][1] or 0.0)):
        auto = next((c for c in group if c.workers == AUTO_WORKERS), None)
        if auto is None:
            continue
        fixed = [c for c in group if c.workers != AUTO_WORKERS]
        tuned = tuned_of(fixed)
        ci = ratio_ci(tuned.launch_rps, auto.launch_rps) if tuned else None
        ratio = ratio_centre(tuned.launch_rps, auto.launch_rps) if tuned and auto.launch_rps else None
        pairs.append(Pair(auto, tuned, ratio, ci, verdict(ci) if tuned else "no fixed count measured",
                          tuple(sorted(c.workers for c in fixed))))
    return pairs


def _intro() -> str:
    return (
        "# Containers: a CPU quota, the server's own worker count and a tuned one\n\n"
        "<!-- Built by scripts/docs from docs/results/containers/; edit "
        "src/pywebbench/report/pages/containers.py, not this file. -->\n\n"
        "Five stacks run as a container runs them (issue 48): the app server in its own cgroup under a CFS "
        "quota of 0.5, 1 and 1.5 CPUs ([run.md](reference/run.md#the-app-server-as-it-will-be-deployed-a-cpu-quota-a-memory-limit-its-own-worker-count)), "
        "started once with no worker flag (`workers=auto`: the count the server picks for itself, as it would "
        "deployed) and once at each of three fixed counts (each section names them); the **tuned** row is the fixed count with the most "
        f"req/s among those whose p99 stayed under {SLO_MS:g} ms. `{SCRIPT}` makes every run below, one after "
        "the other, on a quiet machine. **req/s** is closed loop at the connections stated, the mean of the "
        "launch means with its 95% interval (Student's t over launches); it counts as capacity at "
        f"p99 < {SLO_MS:g} ms only where the p99 column holds it (else it is struck through). **Throttled** is "
        "the time the kernel held the server at its quota per second of load, summed over the CPUs it ran on as "
        "the kernel counts it (so it can pass 1,000 on two CPUs), and the share of CFS periods throttled; **memory** the cgroup's high-water mark over the launch's windows. The verdict is tuned / "
        f"auto with Welch's 95% interval over launch means: equivalent within {EQUIVALENCE:.0%}, tuned or auto "
        "higher when the interval excludes 1, else unresolved. The tuned row is the best of three counts "
        "chosen from the same launches, so its ratio leans a little its way; an `auto higher` or `equivalent` "
        "verdict is not that bias.")


def _not_yet() -> str:
    commands = "\n".join(f"{SCRIPT} {w}" for w in WORKLOADS)
    return ("## Not measured yet\n\nNo results are committed under `docs/results/containers/`. On a quiet "
            f"machine, alone, run both workloads (`{SCRIPT}`, about 40 minutes on the 2-core VM) or one at a "
            f"time:\n\n```sh\n{commands}\n```\n\nthen `scripts/docs` to rebuild this page.")


def _section(workload: str, pairs: Sequence[Pair]) -> str:
    if not pairs:
        return f"## {workload}\n\nNo window of `{workload}` was measured."
    load = pairs[0].auto.load_words
    counts = sorted({n for p in pairs for n in p.tried})
    head = (f"## {workload}\n\nClosed loop at {load}; fixed counts tried: "
            f"{', '.join(map(str, counts))} (the tuned row is the best of them in each pair). `CPUs seen` is the host's CPU count "
            "(what `os.cpu_count()` returns inside a container) / the CPUs the stack was pinned to; "
            "`from host` marks a count that fits the host's CPUs and not the quota.\n\n"
            "| stack | quota | row | workers | CPUs seen | req/s (95% CI) | p99 ms | throttled ms/s (periods) "
            "| memory MiB | tuned / auto |\n|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for pair in pairs:
        lines.append(_row(pair.auto, "auto", _ratio_text(pair)))
        if pair.tuned is not None:
            lines.append(_row(pair.tuned, "tuned", ""))
    return "\n".join(lines) + "\n\n" + "\n".join(_findings(workload, pairs))


def _row(c: Config, kind: str, judged: str) -> str:
    seen = ""
    if kind == "auto" and c.sizing is not None:
        seen = f"{c.sizing.host_cpus} / {c.sizing.stack_cpus}" + (" from host" if sized_from_host(c.sizing) else "")
    rps = _rps_text(c)
    if c.rps is not None and not c.meets_slo:
        rps = f"~~{rps}~~"
    if c.failed:
        rps += f" ({len(c.failed)} window(s) {', '.join(sorted(set(c.failed)))})"
    throttled = "-" if c.throttled_ms_per_s is None else (
        f"{c.throttled_ms_per_s:.0f}" + ("" if c.throttled_share is None else f" ({c.throttled_share:.0%})"))
    return (f"| {escape(c.label)} | {_quota(c.quota)} | {kind} | {c.count} | {seen} | {rps} | {_num(c.p99_ms, 1)} | "
            f"{throttled} | {_num(c.peak_mb, 0)} | {judged} |")


def _rps_text(c: Config) -> str:
    if c.rps is None:
        return "-"
    ci = c.rps_ci
    return f"{c.rps:,.0f}" + ("" if ci is None else f" [{ci[0]:,.0f}, {ci[1]:,.0f}]")


def _ratio_text(pair: Pair) -> str:
    if pair.ratio is None:
        return pair.verdict
    ci = "" if pair.ratio_ci is None else f" [{pair.ratio_ci[0]:.2f}, {pair.ratio_ci[1]:.2f}]"
    return f"{pair.ratio:.2f}{ci} {pair.verdict}"


def _quota(quota: float | None) -> str:
    return "none" if quota is None else f"{quota:g}"


def _num(value: float | None, digits: int) -> str:
    return "-" if value is None else f"{value:,.{digits}f}"


def _findings(workload: str, pairs: Sequence[Pair]) -> list[str]:
    """Sentences written from the figures: where the server's own count cost it, and where it did not."""
    lines = [f"What the figures of `{workload}` show (written from them):", ""]
    lines += [f"- {s}" for s in _sizing_sentences(pairs)]
    gotchas = [s for pair in pairs if (s := _gotcha(pair)) is not None]
    lines += [f"- {s}" for s in gotchas]
    lines += [f"- {s}" for pair in pairs if (s := _limits(pair)) is not None]
    tally: dict[str, int] = defaultdict(int)
    for pair in pairs:
        tally[pair.verdict] += 1
    counted = ", ".join(f"{n} {v}" for v, n in sorted(tally.items(), key=lambda kv: (-kv[1], kv[0])))
    lines.append(f"- Of {len(pairs)} stack x quota pairs: {counted}.")
    if not gotchas:
        lines.append("- In no pair did the server's own count lose req/s to a fixed count by an interval that "
                     f"excludes 1, or miss p99 < {SLO_MS:g} ms where a fixed count held it.")
    lines += [f"- {s}" for s in _throttle_sentences(pairs)]
    return lines


def _sizing_sentences(pairs: Sequence[Pair]) -> list[str]:
    chosen: dict[str, set[int]] = defaultdict(set)
    quotas: dict[str, set[float | None]] = defaultdict(set)
    host: dict[str, list[str]] = defaultdict(list)
    for pair in pairs:
        if (s := pair.auto.sizing) is not None:
            chosen[pair.auto.label].add(s.workers)
            quotas[pair.auto.label].add(pair.auto.quota)
            if (why := sized_from_host(s)) is not None:
                host[pair.auto.label].append(why)
    out = []
    if chosen and not host:
        out.append("No server's own count fitted the host's CPU count rather than the CPUs it was given "
                   "(the sized-from-host rule: the count a server derives from the host's CPUs, 1 x, 2 x or "
                   "2 x + 1, where the quota's would be smaller).")
    for label, counts in chosen.items():
        said = ("at the one quota measured" if len(quotas[label]) == 1 else
                f"the same count at all {len(quotas[label])} quotas" if len(counts) == 1 else
                f"a different count across its {len(quotas[label])} quotas")
        out.append(f"With no worker flag `{label}` started {', '.join(map(str, sorted(counts)))} worker(s), "
                   f"{said}" + (f"; sized from the host: {'; '.join(host[label])}." if host[label] else "."))
    return out


def _gotcha(pair: Pair) -> str | None:
    auto, tuned = pair.auto, pair.tuned
    if tuned is None or auto.rps is None or tuned.rps is None:
        return None
    lost = pair.verdict == "tuned higher"
    missed = tuned.meets_slo and not auto.meets_slo
    host = auto.sizing is not None and sized_from_host(auto.sizing) is not None
    if not (lost or missed or (host and pair.verdict != "equivalent")):
        return None
    where = f"`{auto.label}` at a {_quota(auto.quota)}-CPU quota"
    said = [f"{where}: its own {auto.count} worker(s) served {auto.rps:,.0f} req/s against {tuned.rps:,.0f} at "
            f"{tuned.count} (tuned / auto {_ratio_text(pair)})"]
    if missed:
        said.append(f"its p99 was {_num(auto.p99_ms, 1)} ms, over {SLO_MS:g} ms, where {tuned.count} held "
                    f"{_num(tuned.p99_ms, 1)} ms")
    if auto.throttled_ms_per_s is not None and tuned.throttled_ms_per_s is not None and \
            auto.throttled_ms_per_s + tuned.throttled_ms_per_s > 0:
        said.append(f"throttled {auto.throttled_ms_per_s:.0f} ms per second against {tuned.throttled_ms_per_s:.0f}")
    if auto.peak_mb is not None and tuned.peak_mb is not None:
        said.append(f"memory {auto.peak_mb:.0f} MiB against {tuned.peak_mb:.0f}")
    return "; ".join(said) + "."


def _limits(pair: Pair) -> str | None:
    """What the sweep could not say of a pair: no count held the SLO, or the best was the largest tried."""
    tuned = pair.tuned
    if tuned is None or tuned.rps is None:
        return None
    where = f"`{tuned.label}` at a {_quota(tuned.quota)}-CPU quota"
    if not tuned.meets_slo:
        return (f"{where}: no count tried held p99 < {SLO_MS:g} ms (the most req/s, {tuned.rps:,.0f}, at "
                f"{tuned.count} with a p99 of {_num(tuned.p99_ms, 1)} ms), so none of them has a capacity at this SLO.")
    if pair.largest is not None and tuned.workers == pair.largest:
        return (f"{where}: the tuned count is the largest tried ({tuned.count}), so a larger one may serve more.")
    return None


def _throttle_sentences(pairs: Sequence[Pair]) -> list[str]:
    by_quota: dict[float | None, list[float]] = defaultdict(list)
    for pair in pairs:
        for c in (pair.auto, pair.tuned):
            if c is not None and c.throttled_ms_per_s is not None:
                by_quota[c.quota].append(c.throttled_ms_per_s)
    out = []
    for quota, values in sorted(by_quota.items(), key=lambda kv: kv[0] or 0.0):
        if quota is None:
            continue
        out.append(f"At a {quota:g}-CPU quota no server was throttled." if max(values) == 0 else
                   f"At a {quota:g}-CPU quota the servers were throttled {min(values):.0f} to {max(values):.0f} ms "
                   "per second of load.")
    return out
