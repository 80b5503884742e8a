"""The wire protocol a window speaks to the app server (`--protocol`, `--knob protocol=`): HTTP/1.1
in the clear (what every run before the knob measured), HTTP/2 in the clear by prior knowledge
(h2c), and either over TLS terminated by the app server itself. Each server declares which it
serves (`ServerVariant.protocols`); a stack that cannot serve one is left out with the reason
(plan/protocol_plan.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from pywebbench.core.errors import UserError


class Protocol(StrEnum):
    H1 = "h1"
    H2C = "h2c"
    H1_TLS = "h1-tls"
    H2_TLS = "h2-tls"

    @property
    def tls(self) -> bool:
        return self in (Protocol.H1_TLS, Protocol.H2_TLS)

    @property
    def http2(self) -> bool:
        return self in (Protocol.H2C, Protocol.H2_TLS)

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"


DEFAULT_PROTOCOL = Protocol.H1
PROTOCOL_NAMES = tuple(p.value for p in Protocol)
H1_ONLY = frozenset({Protocol.H1})
EVERY_PROTOCOL = frozenset(Protocol)


def parse_protocol(text: str) -> Protocol:
    """One protocol by name, or a one-line refusal naming the known ones."""
    try:
        return Protocol(text.strip().lower())
    except ValueError:
        raise UserError(f"protocol must be one of {', '.join(PROTOCOL_NAMES)}, got {text.strip()!r}") from None


def protocol_of(value: str | None) -> Protocol:
    """A trial's recorded protocol; None (not asked for, every run before the knob) is h1. A word
    no run writes (an edited file's `"protocol": false` reads as 'False') is a one-line refusal."""
    if value is None:
        return DEFAULT_PROTOCOL
    try:
        return Protocol(value)
    except ValueError:
        raise UserError(f"a trial's recorded protocol must be one of {', '.join(PROTOCOL_NAMES)}, "
                        f"got {value!r}") from None


@dataclass(frozen=True)
class TlsFiles:
    """A run's self-signed certificate for 127.0.0.1 and its private key (stage/tls.py makes them)."""

    certificate: str
    key: str
