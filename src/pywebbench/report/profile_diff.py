"""Where the CPU time moved between two profiled versions (--profile on both): the differential
flame graph of each stack and workload written beside the run's profiles, the functions whose
own-time share changed most as Markdown (a gate's or a compare's summary), and on a failed gate
the terminal's line naming the function that grew most."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from urllib.parse import quote

from pywebbench.analyze.profile_pairs import ProfilePair
from pywebbench.profile.diff import diff_flame_svg, grew_most, top_changes
from pywebbench.profile.files import FOLDER, slug
from pywebbench.report.markdown import escape

TOP_CHANGES = 10

Drawn = tuple[ProfilePair, Path]
"""A pair and its differential flame graph's file."""


def _name(pair: ProfilePair) -> str:
    return f"{pair.stack} {pair.workload}" + (f" (cell {pair.cell})" if pair.cell > 1 else "")


def diff_path(run_dir: Path, pair: ProfilePair) -> Path:
    return run_dir / FOLDER / f"diff.{slug(pair.stack, pair.workload, str(pair.cell) if pair.cell > 1 else '')}.svg"


def write_diff_flames(run_dir: Path, pairs: Iterable[ProfilePair]) -> tuple[Drawn, ...]:
    """Each pair's differential flame graph (head's tree, red where a frame's share grew, blue
    where it shrank) in the run's profiles folder; a write that fails leaves that pair undrawn."""
    drawn = []
    for pair in pairs:
        path = diff_path(run_dir, pair)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(diff_flame_svg(pair.base, pair.head, f"{_name(pair)}: head against base"),
                            encoding="utf-8")
        except OSError:
            continue
        drawn.append((pair, path))
    return tuple(drawn)


def _points(delta: float) -> str:
    return f"{100 * delta:+.1f} pts"


def changes_markdown(drawn: Sequence[Drawn], n: int = TOP_CHANGES) -> str:
    """Per stack and workload: a link to its differential flame graph and the n functions whose
    share of the samples (own time) changed most, with their share in base and in head."""
    if not drawn:
        return ""
    lines = ["### Where the CPU time moved (--profile)", "",
             "Each function's own time as a share of its version's samples (so a faster head's larger "
             "sample count does not read as growth); the flame graph is head's, red where a frame's share "
             "grew, blue where it shrank. The functions come in the order their change stands out from the "
             "sampling's own noise: z, the change over its binomial standard error."]
    for pair, path in drawn:
        lines += ["", f"**{escape(_name(pair))}**: {pair.base.total:,} samples in base, {pair.head.total:,} in head "
                      f"([differential flame graph]({quote(str(path), safe='/:')}))", "",
                  "| Function | base | head | change | z |", "|---|---:|---:|---:|---:|"]
        lines += [f"| {escape(c.function)} | {c.base:.1%} | {c.head:.1%} | {_points(c.delta)} | {c.z:+.1f} |"
                  for c in top_changes(pair.base, pair.head, n)]
    return "\n".join(lines) + "\n"


def profile_lines(drawn: Sequence[Drawn], regressed: Iterable[str] = ()) -> str:
    """The terminal's lines after a gate's verdicts: where each differential flame graph is, and
    for each regressed stack (a gate's stack id, a compare's label) the function whose share grew most."""
    if not drawn:
        return ""
    lines = [f"profile: {_name(pair)}: differential flame graph {path}" for pair, path in drawn]
    failed = set(regressed)
    for pair, _path in drawn:
        grown = grew_most(pair.base, pair.head) if pair.stack in failed else None
        if grown is not None:
            lines.append(f"profile: {_name(pair)}: {grown.function} grew most, {grown.base:.1%} -> {grown.head:.1%} "
                         f"of the samples ({_points(grown.delta)})")
    return "\n".join(lines) + "\n"
