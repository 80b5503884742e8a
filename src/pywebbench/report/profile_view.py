"""A table's profiled windows (--profile) as the HTML report shows them beside it: per stack, a
line with the CPU split and the sampling's cost, the flame graph (drawn from the results file's
own stacks, so the page needs no other file) and the functions with the most own time."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup

from pywebbench.analyze.rows import Row
from pywebbench.profile.flame import CATEGORY_COLOURS, by_category, flame_svg, warm
from pywebbench.profile.stacks import expand
from pywebbench.profile.top import FunctionTime, top_functions
from pywebbench.results.model import ProfileRecord

TOP = 10
LEGEND = tuple((name, "rgb({},{},{})".format(*rgb)) for name, rgb in CATEGORY_COLOURS.items())


@dataclass(frozen=True)
class FlameView:
    label: str
    summary: str
    svg: Markup | None
    """The flame graph, every name in it escaped by the renderer; None where nothing was sampled."""
    top: tuple[FunctionTime, ...] = ()
    legend: tuple[tuple[str, str], ...] = ()
    """(category, CSS colour) of the flame graph's colours, where it is coloured by category."""


def split_line(profile: ProfileRecord) -> str:
    """'812 samples: kernel 40%, server 25%, ...; sampling cost -8.1% req/s', or why there are none."""
    if profile.unreadable is not None:
        return f"not sampled: {profile.unreadable}"
    if profile.error is not None:
        return f"no profile: {profile.error}"
    total = max(1, profile.samples)
    waits = f" ({profile.idle_samples:,} more waiting, not counted)" if profile.idle_samples else ""
    line = f"{profile.samples:,} samples{waits}: " + ", ".join(f"{name} {count / total:.0%}" for name, count in profile.split)
    if profile.overhead is not None:
        line += f"; sampling cost {profile.overhead:+.1%} req/s against the measured windows"
    return line


def flame_views(rows: Sequence[Row]) -> tuple[FlameView, ...]:
    """One per row with a profiled window, in the table's order."""
    views = []
    for row in rows:
        profile = row.profile
        if profile is None:
            continue
        stacks = expand(profile.frames, profile.stacks)
        title = f"{row.label} {profile.spec.workload}"
        colour = by_category(dict(zip(profile.frames, profile.frame_categories, strict=False))) \
            if profile.frame_categories else warm
        svg = Markup(flame_svg(stacks, title, colour)) if stacks.total else None  # escaped by flame_svg
        views.append(FlameView(row.label, f"{row.label}: {split_line(profile)}", svg, top_functions(stacks, TOP),
                               LEGEND if profile.frame_categories else ()))
    return tuple(views)
