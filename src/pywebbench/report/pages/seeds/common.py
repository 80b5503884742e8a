"""What every seed page is made of: a preset's run loaded from docs/results/seeds/, the seed's
published throughput beside ours (throughput.py), its stated orderings checked, its other figures,
and the one figure it could not see (CPU per request).

Every number on a page is either the seed's (from the preset, which names the seed's file and
section) or read from a committed results file; the sentences are made from those numbers.
A preset without a committed run says so and gives the command that makes it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from datetime import datetime

from pywebbench.analyze.verdict_family import rule as verdict_rule
from pywebbench.analyze.agreement import ClaimCheck, Estimate, Verdict, check_claim
from pywebbench.analyze.rows import Summary, summarize
from pywebbench.plan.knob_values import knob_value, window_seconds
from pywebbench.plan.presets import Preset, get_preset
from pywebbench.report.markdown import code, escape
from pywebbench.report.pages.seeds.throughput import (  # estimate_text: seed000 reads it from here too
    Where, estimate_text as estimate_text, point_of, point_of_row, published_throughput, sentences, tally,
    throughput_table,
)
from pywebbench.report.published import pairs
from pywebbench.results.model import ResultSet
from pywebbench.results.store import load_results, results_path

SEEDS_DIR = "seeds"
"""docs/results/seeds/<preset>/results.jsonl: one run per preset, made by scripts/seed-runs."""

def run_dir(results: Path, preset: str) -> Path:
    return results / SEEDS_DIR / preset


def load_run(results: Path, preset: str) -> ResultSet | None:
    """The committed run of a preset, or None when it has not been measured here yet."""
    directory = run_dir(results, preset)
    return load_results(directory) if results_path(directory).exists() else None


SETTLE_DRAINED_SINCE = "2026-11-26T08:30:00+00:00"
"""From this commit on, a window starts once its server has served what its settle or warmup left
queued (measure/window.drain_settled); a run made before read each such window low."""


def settle_backlog_note(results: ResultSet) -> str | None:
    """For a run made before windows waited for their settle's queue: how low that read each
    workload's windows, where it is 1% or more of its req/s (else None)."""
    if results.header.created_at >= SETTLE_DRAINED_SINCE:
        return None
    shares: dict[str, list[float]] = defaultdict(list)
    for trial in results.trials:
        spec = trial.spec
        if trial.load is None or trial.load.rps <= 0 or spec.rate or spec.requests or window_seconds(spec) <= 0:
            continue
        if spec.settle_s <= 0 and spec.warmup_s <= 0:
            continue
        lost = knob_value(spec, "connections") / window_seconds(spec)  # the queued requests served, uncounted, in the window
        shares[spec.workload].append(lost / (trial.load.rps + lost))
    low = {w: sorted(v)[len(v) // 2] for w, v in shares.items() if sorted(v)[len(v) // 2] >= 0.01}
    if not low:
        return None
    said = "; ".join(f"on `{escape(w)}` by about {share:.0%} (the median window)" for w, share in sorted(low.items()))
    return ("**Read low where the queue was long.** This run was made before a window waited for its server to "
            "serve what the settle (or warm-up) before it had left queued, one request per connection: every "
            "window then spent its first connections / capacity seconds on those uncounted requests and read "
            f"low by about connections / duration req/s, {said}. Ratios between stacks of very different speed on "
            "those workloads are distorted; a re-run with today's harness corrects it.")


def command(preset: str) -> str:
    return f"scripts/seed-runs {preset}"


def not_measured(preset: str) -> str:
    return (f"**Not yet measured here.** `{command(preset)}` makes the run (the preset in full with the "
            f"precision method and a stated budget, into `docs/results/{SEEDS_DIR}/{preset}/`); "
            "`scripts/docs` then rebuilds this page. Until then only the seed's own figures are shown.")


def source(preset: Preset) -> str:
    return f"seed text `{preset.seed}.txt`, {preset.published_from}"


def minutes_measured(results: ResultSet) -> float | None:
    """Wall time from the header (written once the environments are built) to the last window's
    end: what a budget is kept against (within one window of it)."""
    if not results.trials:
        return None
    start = datetime.fromisoformat(results.header.created_at)
    end = max(datetime.fromisoformat(t.finished_at) for t in results.trials)
    return (end - start).total_seconds() / 60


def run_line(results: ResultSet, summary: Summary, *, ties: bool = True) -> str:
    """Which run, made how, with what spend: what the reader needs to weigh the intervals
    (`ties`: the page's tables have a *Tie* column, which the line then explains)."""
    options = results.header.options
    rows = summary.rows
    method = rows[0].method if rows else str(options.get("method", "?"))
    rounds = max((r.rounds for r in rows), default=0)
    launches = max((r.launches for r in rows), default=0)
    spend = []
    if options.get("precision"):
        spend.append(f"precision ±{float(options['precision']):.0%}")
    if options.get("budget_s"):
        spend.append(f"budget {float(options['budget_s']) / 60:g} min")
    took = minutes_measured(results)
    if took is not None:
        spend.append(f"{took:.1f} min from its header to its last window")
    return (f"Run `{escape(results.header.run_id)}` ({escape(results.header.created_at)}, "
            f"{'complete' if results.complete else 'incomplete'}): method {escape(method)}, up to {rounds} rounds "
            f"in {launches} launches{', ' + ', '.join(spend) if spend else ''}; ratios are to "
            f"`{summary.baseline}` in the same cell (paired within rounds under the interleaved and duet "
            "methods)." + (" Rows with the same *Tie* number cannot be told apart with what was spent." if ties else ""))


# --- the seed's words ---------------------------------------------------------------------------


def claim_summary(check: ClaimCheck) -> str:
    """'agrees (12 of 12 pairs)', or the verdict with its counts and the pairs that decide it."""
    pairs_ = check.pairs
    if not pairs_:
        return "not measured: this run has none of the stacks it names"
    what = "level" if check.claim.level else "above"
    if len(pairs_) == 1:
        pair = pairs_[0]
        return (f"{check.verdict.value}: `{pair.higher.label}` against `{pair.lower.label}` "
                f"{estimate_text(pair.estimate)} (the seed: {what})")
    if check.verdict is Verdict.AGREES:
        return f"agrees in all {len(pairs_)} pairs, " + ("tied in each" if check.claim.level
                                                          else "each outside the noise")
    text = f"{check.verdict.value}: of {len(pairs_)} pairs, {tally([p.verdict for p in pairs_])}"
    deciding = [p for p in pairs_ if p.verdict is check.verdict]
    if deciding:
        shown = "; ".join(f"`{p.higher.label}` against `{p.lower.label}` {estimate_text(p.estimate)}"
                          for p in deciding[:4])
        more = f" and {len(deciding) - 4} more" if len(deciding) > 4 else ""
        text += f" ({shown}{more})"
    return text


def claims_section(preset: Preset, results: ResultSet | None, summary: Summary | None) -> str:
    if not preset.claims:
        return ""
    out = ["The seed's words, each checked pair by pair with the two stacks' own paired ratio "
           "(unpaired where they ran in different cells):" if results is not None
           else "The seed's words (each is checked pair by pair once a run is committed):", ""]
    for claim in preset.claims:
        where = f", {point_of(claim.where)}" if claim.where else ""
        out.append(f"- *{escape(claim.quote)}* ({claim.workload}{where})")
        if results is not None and summary is not None:
            out.append(f"  - {claim_summary(check_claim(results, summary.rows, claim, summary.priors))}")
    return "\n".join(out)


# --- the seed's other figures, and the one it could not see --------------------------------------


def _num(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:,.2f}" if abs(value) < 10 and not float(value).is_integer() else f"{value:,.0f}"


def other_figures(preset: Preset, results: ResultSet | None) -> str:
    """The seed's latency, session and count figures, 'seed / here' per cell."""
    found = pairs(results, preset) if results is not None else [(f, None) for f in preset.published]
    kept = [(f, v) for f, v in found if f.metric not in ("ratio", "rps")]
    if not kept:
        return ""
    metrics = list(dict.fromkeys(f.metric for f, _ in kept))
    grouped: dict[tuple[str, str, Where], dict[str, tuple[float, float | None]]] = defaultdict(dict)
    for figure, value in kept:
        grouped[(figure.stack, figure.workload, figure.where)][figure.metric] = (figure.value, value)
    head = ["Stack", "Workload", *(["Point"] if preset.grid else []), *metrics]
    out = ["Each cell is the seed's figure / ours (`-`: not measured)." if results is not None
           else "The seed's figures (not yet measured here).", "",
           "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for (stack, workload, where), values in grouped.items():
        cells = [(f"{_num(values[m][0])} / {_num(values[m][1])}" if results is not None else _num(values[m][0]))
                 if m in values else "" for m in metrics]
        out.append("| " + " | ".join([code(stack), workload, *([point_of(where)] if preset.grid else []), *cells])
                   + " |")
    return "\n".join(out)


def cpu_section(preset: Preset, summary: Summary, why: str) -> str:
    """CPU per request: the app server's CPU time per request, from the kernel's accounting."""
    rows = [r for r in summary.rows if r.cpu_ms_per_req is not None]
    if not rows:
        return "This run recorded no CPU per request (no cgroup or /proc figure for the app server)."
    head = ["Stack", "Workload", *(["Point"] if preset.grid else []), "CPU ms per request",
            f"CPU/req ratio to {summary.baseline} [95%]"]
    out = [why, "", "| " + " | ".join(head) + " |", "|" + "|".join("---" for _ in head) + "|"]
    for row in sorted(rows, key=lambda r: (r.spec.workload, point_of_row(r, preset), r.cpu_ms_per_req or 0.0)):
        ratio = "-"
        if row.label == summary.baseline:
            ratio = "1 (the baseline)"
        elif row.cpu_ratio is not None:
            ratio = estimate_text(Estimate(row.cpu_ratio, *(row.cpu_ratio_ci or (None, None))))
        point = [point_of_row(row, preset)] if preset.grid else []
        out.append("| " + " | ".join([code(row.label), row.spec.workload, *point, f"{row.cpu_ms_per_req:.3f}", ratio])
                   + " |")
    for workload in dict.fromkeys(r.spec.workload for r in rows):
        some = [r for r in rows if r.spec.workload == workload]
        least = min(some, key=lambda r: r.cpu_ms_per_req or 0.0)
        most = max(some, key=lambda r: r.cpu_ms_per_req or 0.0)
        if least is not most and least.cpu_ms_per_req:
            out += ["", f"On {workload}, `{least.label}` spent the least CPU per request "
                        f"({least.cpu_ms_per_req:.3f} ms) and `{most.label}` the most ({most.cpu_ms_per_req:.3f} ms, "
                        f"{(most.cpu_ms_per_req or 0.0) / least.cpu_ms_per_req:.1f}x)."]
    return "\n".join(out)


# --- a preset's whole section ----------------------------------------------------------------------


def our_ranking(summary: Summary, workload: str, preset: Preset | None = None) -> str:
    """Our order on one workload (paired rows only), one ranking per setting (a preset's grid
    point: rows of different settings were measured in different sets), each row against the
    next: different, equivalent within the run's margin, or unresolved."""
    rows = [r for r in summary.rows if r.spec.workload == workload and r.method.paired and r.ratio is not None]
    cells = list(dict.fromkeys(r.spec.cell for r in rows))
    parts = []
    for cell in cells:
        here = [r for r in rows if r.spec.cell == cell]
        if len(here) < 2:
            continue
        point = f" at {point_of_row(here[0], preset)}" if preset is not None and preset.grid and len(cells) > 1 else ""
        lines = [f"Our ranking{point}, each stack against the next one down (different: the paired ratio "
                 "tells them apart; equivalent: within the run's `--equivalence` margin by two one-sided tests; "
                 "unresolved: neither; " + _lowered(verdict_rule()) + "):", "", "| # | Stack | Our ratio [95%] | Against the next |", "|---:|---|---|---|"]
        for i, row in enumerate(sorted(here, key=lambda r: -(r.ratio or 0.0)), start=1):
            interval = f" [{row.ratio_ci[0]:.2f}, {row.ratio_ci[1]:.2f}]" if row.ratio_ci else \
                f" ({row.interval_note})" if row.interval_note else ""
            lines.append(f"| {i} | {code(row.label)} | {row.ratio:.2f}{interval} | {row.next_verdict or ''} |")
        counts = Counter(r.next_verdict for r in here if r.next_verdict)
        lines += ["", "Adjacent pairs: " + ", ".join(f"{counts.get(v, 0)} {v}" for v in
                                                      ("different", "equivalent", "unresolved")) + "."]
        parts.append("\n".join(lines))
    return "\n\n".join(parts)


def measured(results_dir: Path, preset: str, baseline: str) -> tuple[ResultSet, Summary] | None:
    results = load_run(results_dir, preset)
    return None if results is None else (results, summarize(results, baseline=baseline))


def preset_section(results_dir: Path, name: str, baseline: str, why_cpu: str, level: int = 2) -> str:
    preset = get_preset(name)
    run = measured(results_dir, name, baseline)
    results, summary = run if run is not None else (None, None)
    hashes = "#" * level
    parts = [f"{hashes} {escape(preset.title)}",
             f"`pywebbench run --preset {name}`; the seed's figures: {source(preset)}."]
    parts.append(run_line(results, summary) if results is not None and summary is not None else not_measured(name))
    if results is not None and (low := settle_backlog_note(results)) is not None:
        parts.append(low)
    workloads = list(dict.fromkeys([p.workload for p in published_throughput(preset, baseline)]
                                   + [r.spec.workload for r in (summary.rows if summary else ())]))
    for workload in workloads:
        parts.append(f"{hashes}# Throughput on {workload}")
        parts.append(throughput_table(preset, summary, baseline, workload))
        if summary is not None and (said := sentences(preset, summary, baseline, workload)):
            parts.append(said)
        if summary is not None and (ours := our_ranking(summary, workload, preset)):
            parts.append(ours)
    if claims := claims_section(preset, results, summary):
        parts += [f"{hashes}# What the seed said", claims]
    if others := other_figures(preset, results):
        parts += [f"{hashes}# The seed's other figures", others]
    if summary is not None:
        parts += [f"{hashes}# What the seed could not see: CPU per request", cpu_section(preset, summary, why_cpu)]
    return "\n\n".join(parts)


def headline(results_dir: Path, preset: str, baseline: str, claim: int = 0) -> tuple[str, str, str]:
    """(what the seed claimed, what we measured, agree?) for the seeds table."""
    p = get_preset(preset)
    said = p.claims[claim]
    quote = f"*{escape(said.quote)}*"
    run = measured(results_dir, preset, baseline)
    if run is None:
        return quote, f"not yet measured here: `{command(preset)}`", "-"
    check = check_claim(run[0], run[1].rows, said, run[1].priors)
    return quote, escape(claim_summary(check)), check.verdict.value


def page_header(title: str, seed: str, source_module: str) -> str:
    return (f"# {title}\n\n<!-- Built by scripts/docs from docs/results/{SEEDS_DIR}/; edit "
            f"src/pywebbench/report/pages/seeds/{source_module}.py, not this file. -->\n\n"
            f"Seed `{seed}`. Our runs are in `docs/results/{SEEDS_DIR}/<preset>/results.jsonl`; every figure "
            "of ours below is read from them, every figure of the seed's from its text (each preset names "
            "the section).")


def _lowered(sentence: str) -> str:
    """A sentence set inside another's parentheses: its first letter lowered, its full stop dropped."""
    return sentence[:1].lower() + sentence[1:].rstrip(".")
