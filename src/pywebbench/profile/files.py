"""A profile's files in the run folder: `profiles/<stack>.<workload>[.<point>]/` holds py-spy's
collapsed stacks as recorded (`stacks.txt`), the same as speedscope JSON (`speedscope.json`,
opens in speedscope.app or its CLI) and the flame graph (`flame.svg`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pywebbench.profile.flame import Colour, flame_svg, warm
from pywebbench.profile.stacks import Stacks, to_speedscope

FOLDER = "profiles"
COLLAPSED, SPEEDSCOPE, FLAME = "stacks.txt", "speedscope.json", "flame.svg"


def slug(*parts: str) -> str:
    """A file name from a label, a workload and a point: letters, digits, '-', '_' and '.' only."""
    return ".".join(re.sub(r"[^A-Za-z0-9_.-]+", "_", p).strip("._") or "_" for p in parts if p)


def profile_folder(run_dir: Path, label: str, workload: str, point: str = "") -> Path:
    return run_dir / FOLDER / slug(label, workload, point)


def write_views(folder: Path, recorded: Stacks, functions: Stacks, title: str,
                colour: Colour = warm) -> tuple[Path, Path]:
    """speedscope.json (the samples on the CPU, every frame as recorded: lines and full paths) and
    flame.svg (a frame per function, short paths: readable at its width) beside the collapsed
    stacks py-spy wrote (every sample, the waits too)."""
    speedscope = folder / SPEEDSCOPE
    speedscope.write_text(json.dumps(to_speedscope(recorded, title)), encoding="utf-8")
    flame = folder / FLAME
    flame.write_text(flame_svg(functions, title, colour), encoding="utf-8")
    return speedscope, flame
