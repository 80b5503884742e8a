"""A seed's page from its parts: the header, one section per preset, and the seeds table's line."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pywebbench.plan.presets import get_preset
from pywebbench.report.pages.seeds.common import headline, page_header, preset_section


@dataclass(frozen=True)
class SeedPage:
    number: str
    """'000': the page is docs/seed-000.md."""
    title: str
    presets: tuple[str, ...]
    baseline: str
    """The stack the seed measured the others against (its own baseline where it named one)."""
    baseline_why: str
    why_cpu: str
    """Why CPU per request changes how this seed's table reads (no figure in it)."""
    headline_preset: str
    headline_claim: int = 0

    @property
    def file(self) -> str:
        return f"seed-{self.number}.md"

    @property
    def seed(self) -> str:
        return get_preset(self.presets[0]).seed

    def sections(self, results: Path) -> list[str]:
        return [preset_section(results, name, self.baseline, self.why_cpu) for name in self.presets]

    def render(self, results: Path, extra: str = "") -> str:
        parts = [page_header(self.title, self.seed, f"seed{self.number}"),
                 f"Ratios are to `{self.baseline}`: {self.baseline_why}"]
        if extra:
            parts.append(extra)
        parts += self.sections(results)
        return "\n\n".join(parts) + "\n"

    def headline(self, results: Path) -> tuple[str, str, str]:
        return headline(results, self.headline_preset, self.baseline, self.headline_claim)
