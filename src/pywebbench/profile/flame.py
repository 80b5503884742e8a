"""A flame graph as a standalone SVG: no script, no external file, readable at 1,400 px.

Roots at the bottom, callees above their callers, each frame as wide as its samples (siblings
in name order, as flamegraph.pl draws them), its name written where it fits and every frame's
full name, samples and share in a <title> tooltip. Pure: stacks in, text out; every name is
escaped, so a hostile frame name cannot break the document or the page that embeds it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from xml.sax.saxutils import escape, quoteattr

from pywebbench.profile.stacks import Stack, Stacks

WIDTH = 1400
FRAME_HEIGHT = 18
FONT_SIZE = 12
CHAR_WIDTH = 7.2
"""A 12 px monospace character's advance, to know how much of a name fits in a frame."""
PAD = 10
TOP = 34
"""Room above the frames for the title."""
MIN_WIDTH = 0.5
"""Frames narrower than this many pixels are left out (their samples still count in their parents)."""


@dataclass
class Node:
    """One frame at one place in the call tree, with every sample at or above it."""

    name: str
    samples: int = 0
    path: Stack = ()
    children: dict[str, Node] = field(default_factory=dict)


def call_tree(stacks: Stacks) -> Node:
    root = Node("all")
    for stack, count in stacks.counts:
        root.samples += count
        node = root
        for depth, name in enumerate(stack):
            node = node.children.setdefault(name, Node(name, path=stack[:depth + 1]))
            node.samples += count
    return root


@dataclass(frozen=True)
class Box:
    """A frame as drawn."""

    node: Node
    x: float
    width: float
    depth: int
    """0 for the root ('all'), 1 for the outermost frames."""


def layout(root: Node, width: float = WIDTH - 2 * PAD) -> Iterator[Box]:
    """Every frame at least MIN_WIDTH wide, its width in proportion to its samples."""
    if root.samples <= 0:
        return
    scale = width / root.samples
    pending = [(root, float(PAD), 0)]
    while pending:
        node, x, depth = pending.pop()
        size = node.samples * scale
        if size < MIN_WIDTH:
            continue
        yield Box(node, x, size, depth)
        offset = x
        for name in sorted(node.children):
            child = node.children[name]
            pending.append((child, offset, depth + 1))
            offset += child.samples * scale


Colour = Callable[[Node], str]
Tooltip = Callable[[Node, int], str]


def warm(node: Node) -> str:
    """flamegraph.pl's warm palette, steady per name (the same function, the same colour)."""
    digest = hashlib.blake2b(node.name.encode(), digest_size=3).digest()
    return f"rgb({205 + digest[0] % 50},{digest[1] % 230},{digest[2] % 55})"


CATEGORY_COLOURS: dict[str, tuple[int, int, int]] = {
    "kernel": (214, 96, 77), "server": (244, 165, 60), "framework": (90, 140, 210), "app": (90, 175, 95),
    "rest": (170, 170, 170),
}
"""A frame's colour by its category (profile/split.py); a frame no rule claims takes its caller's."""


def by_category(categories: Mapping[str, str]) -> Colour:
    """Colour each frame by its own category (`categories`: frame name -> category), or its
    nearest caller's; a little lighter or darker per name, so neighbours stay apart. As in the
    split, the C library is the kernel's only where nothing is called from it (libc's
    __libc_start_main at every root is not)."""
    def colour(node: Node) -> str:
        own = categories.get(node.name, "")
        found = own if own and (own != "kernel" or not node.children) else next(
            (categories[f] for f in reversed(node.path[:-1]) if categories.get(f, "") not in ("", "kernel")), "rest")
        red, green, blue = CATEGORY_COLOURS.get(found, CATEGORY_COLOURS["rest"])
        shade = hashlib.blake2b(node.name.encode(), digest_size=1).digest()[0] % 31 - 15
        return f"rgb({_clip(red + shade)},{_clip(green + shade)},{_clip(blue + shade)})"
    return colour


def _clip(value: int) -> int:
    return max(0, min(255, value))


def plain_tooltip(node: Node, total: int) -> str:
    return f"{node.name}: {node.samples:,} samples, {node.samples / total:.1%}" if total else node.name


def flame_svg(stacks: Stacks, title: str, colour: Colour = warm, tooltip: Tooltip = plain_tooltip) -> str:
    """The SVG document (no XML declaration, so it can also sit inside an HTML page)."""
    root = call_tree(stacks)
    boxes = list(layout(root))
    depth = max((b.depth for b in boxes), default=0)
    height = TOP + (depth + 1) * FRAME_HEIGHT + PAD
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="monospace" font-size="{FONT_SIZE}" class="flame">',
             f'<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#fdfdf8"/>',
             f'<text x="{WIDTH / 2:.0f}" y="{TOP - 14}" text-anchor="middle" font-size="{FONT_SIZE + 3}">'
             f'{escape(title)}</text>']
    if not boxes:
        parts.append(f'<text x="{PAD}" y="{TOP + FRAME_HEIGHT}">no samples</text>')
    for box in boxes:
        y = height - PAD - (box.depth + 1) * FRAME_HEIGHT
        fill = "#e0e0e0" if box.depth == 0 else colour(box.node)
        parts.append(f'<g><title>{escape(tooltip(box.node, root.samples))}</title>'
                     f'<rect x="{box.x:.2f}" y="{y}" width="{box.width:.2f}" height="{FRAME_HEIGHT - 1}" '
                     f'fill={quoteattr(fill)} rx="2"/>{_label(box, y)}</g>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def _label(box: Box, y: int) -> str:
    """The frame's name, cut to what fits with '..', or nothing in a frame under three characters."""
    fits = int((box.width - 6) // CHAR_WIDTH)
    if fits < 3:
        return ""
    name = box.node.name if len(box.node.name) <= fits else box.node.name[:fits - 2] + ".."
    return f'<text x="{box.x + 3:.2f}" y="{y + FRAME_HEIGHT - 5}">{escape(name)}</text>'
