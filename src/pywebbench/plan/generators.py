"""The load generators a run can use, and what each supports; the checks ask these, not names.

The generators themselves (how each is run and read) are loadgen/; this is what the plan needs
to know of them before anything starts.
"""

from __future__ import annotations

from enum import StrEnum


class Generator(StrEnum):
    WRK = "wrk"
    AB = "ab"
    OHA = "oha"
    VEGETA = "vegeta"

    @property
    def open_loop(self) -> bool:
        """Keeps an offered rate (--rate, --slo), its latencies free of coordinated omission."""
        return self in (Generator.OHA, Generator.VEGETA)

    @property
    def sends_a_mix(self) -> bool:
        """Sends a weighted mix of several requests (--request ... more than once)."""
        return self in (Generator.WRK, Generator.VEGETA)

    @property
    def runs_to_a_count(self) -> bool:
        """Takes --requests: a window of N requests lasts as long as the stack takes to answer them."""
        return self is Generator.AB

    @property
    def on_several_hosts(self) -> bool:
        """Runs on the generator hosts of --hosts or the netns rig."""
        return self is Generator.WRK


GENERATOR_NAMES = tuple(g.value for g in Generator)
