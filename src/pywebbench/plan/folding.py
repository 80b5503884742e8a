"""Which requests of a log are one kind, and what a request keeps of its credentials.

A kind is a method and a normalised target: `GET /notes/{id}`. By default each path segment that
is all digits folds to `{id}`, a UUID to `{uuid}`, 16 or more hex digits to `{hex}`, and a
base64-like token of 20 or more characters (letters and digits of the base64 alphabet, in both
cases or without a hyphen, so a slug such as `top-10-tips-for-2024` stays) to `{token}`; query
strings are kept as observed.

`--fold RULE` (any number, applied in order) changes that:

- `query`: drop every query string (`/notes?limit=5` and `/notes` are one kind);
- `query:NAME,NAME`: keep only these query parameters, their values as observed;
- `values`: keep every query parameter but fold its value to `{}` (`/search?q={}&page={}`);
- `values:NAME,NAME`: fold only these parameters' values;
- `re:PATTERN=>REPLACEMENT`: a Python regular expression replaced (every match, `\\1` and
  `\\g<name>` allowed) in the path and query as logged, before the default folding:
  `re:^/users/[^/?]+=>/users/{user}`.

The `re:` rules run first, on the target as logged; then the default folding of the path; then the
query rules. A kind's label is only a label: the request sent for it is the most frequent concrete
target of the kind.

Credentials: query parameters whose name looks like one (token, secret, session, auth, passw,
pwd, api_key/apikey, key, sig, signature, any case) are dropped from the targets, unless named
in keep; so are credential headers (`credential_header`), and always the headers a replay must not
copy (`dropped_header`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import unquote_plus

from pywebbench.core.errors import UserError

_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_HEX = re.compile(r"[0-9a-fA-F]{16,}")
_TOKEN = re.compile(r"[A-Za-z0-9_+=-]{20,}")
_PARAM_NAME = re.compile(r"[^\s,=&?#]+")
_CREDENTIAL_PARAM = re.compile(r"token|secret|session|auth|passw|pwd|api[-_]?key|^key$|^sig$|signature", re.I)
_CREDENTIAL_HEADER = re.compile(r"token|secret|session|auth", re.I)
CREDENTIAL_HEADERS = frozenset({"cookie", "set-cookie", "authorization", "proxy-authorization", "x-api-key",
                                "x-auth-token", "x-csrf-token"})
"""Always credentials; so is any header whose name contains token, secret, session or auth."""
DROPPED_HEADERS = frozenset({
    "host", "content-length", "connection", "keep-alive", "proxy-connection", "transfer-encoding", "te",
    "trailer", "upgrade", "accept-encoding",
    "if-none-match", "if-modified-since", "if-match", "if-unmodified-since", "if-range", "range",
})
"""Never copied into a replay: hop-by-hop and framing headers (and any HTTP/2 pseudo-header such as
`:authority`), Accept-Encoding, and the conditional and range headers (their answers are 304 or 206,
not the resource)."""
FOLD_GRAMMAR = "query, query:NAME,NAME, values, values:NAME,NAME or re:PATTERN=>REPLACEMENT"


class FoldKind(StrEnum):
    QUERY = "query"
    VALUES = "values"
    REGEX = "re"


@dataclass(frozen=True)
class FoldRule:
    """One `--fold` rule (see the module's docstring for the grammar)."""

    text: str
    """As given, for the record."""
    kind: FoldKind
    names: tuple[str, ...] = ()
    """QUERY: the parameters kept (none: the whole query dropped); VALUES: the parameters whose
    values fold (none: every one)."""
    pattern: re.Pattern[str] | None = None
    replacement: str = ""


def parse_fold(text: str) -> FoldRule:
    head, sep, rest = text.partition(":")
    if head == "re" and sep:
        pattern, arrow, replacement = rest.partition("=>")
        if not arrow or not pattern:
            raise UserError(f"--fold {text!r}: a regex rule looks like re:PATTERN=>REPLACEMENT")
        try:
            compiled = re.compile(pattern)
            compiled.sub(replacement, "")  # compiles the replacement: a bad group reference fails here
        except re.error as exc:
            raise UserError(f"--fold {text!r}: {exc}") from None
        return FoldRule(text, FoldKind.REGEX, pattern=compiled, replacement=replacement)
    if head in (FoldKind.QUERY, FoldKind.VALUES):
        if sep and not rest.strip():
            raise UserError(f"--fold {text!r} names no parameter: drop the ':' or name some ({head}:NAME,NAME)")
        names = tuple(name.strip() for name in rest.split(",")) if sep else ()
        bad = [name for name in names if not _PARAM_NAME.fullmatch(name)]
        if bad:
            raise UserError(f"--fold {text!r}: {bad[0]!r} is not a query parameter name")
        return FoldRule(text, FoldKind(head), names=names)
    raise UserError(f"--fold {text!r}: unknown rule; use {FOLD_GRAMMAR}")


def parse_folds(texts: Sequence[str]) -> tuple[FoldRule, ...]:
    return tuple(parse_fold(text) for text in texts)


def fold_segment(segment: str) -> str:
    """A path segment, or the placeholder of the id, UUID, hex string or token it is."""
    if not segment or not segment.isascii():
        return segment
    if segment.isdigit():
        return "{id}"
    if len(segment) == 36 and _UUID.fullmatch(segment):
        return "{uuid}"
    if len(segment) >= 16 and _HEX.fullmatch(segment):
        return "{hex}"
    if len(segment) >= 20 and _TOKEN.fullmatch(segment) and _token_like(segment):
        return "{token}"
    return segment


def _token_like(segment: str) -> bool:
    if not any(c.isdigit() for c in segment) or not any(c.isalpha() for c in segment):
        return False
    return "-" not in segment or (segment.lower() != segment and segment.upper() != segment)


def credential_header(name: str, keep: frozenset[str]) -> bool:
    lower = name.lower()
    return lower not in keep and (lower in CREDENTIAL_HEADERS or bool(_CREDENTIAL_HEADER.search(lower)))


def dropped_header(name: str) -> bool:
    return name.startswith(":") or name.lower() in DROPPED_HEADERS


@dataclass(frozen=True)
class Folded:
    target: str
    """The target as logged, credential parameters dropped: what a replay sends."""
    kind: str
    """The normalised target of its kind."""
    stripped: tuple[str, ...]
    """The names of the credential parameters dropped."""


class Folder:
    """Folds targets by the rules, remembering each target it folded (a log repeats them)."""

    def __init__(self, rules: Sequence[FoldRule] = (), keep: Sequence[str] = ()) -> None:
        self.regexes = [r for r in rules if r.kind is FoldKind.REGEX]
        self.query_rules = [r for r in rules if r.kind is not FoldKind.REGEX]
        self.keep = frozenset(name.lower() for name in keep)
        self._seen: dict[str, Folded] = {}

    def fold(self, target: str) -> Folded:
        folded = self._seen.get(target)
        if folded is None:
            folded = self._seen[target] = self._fold(target)
        return folded

    def _fold(self, target: str) -> Folded:
        path, sep, query = target.partition("?")
        stripped: tuple[str, ...] = ()
        if sep:
            pairs = query.split("&")
            kept = [p for p in pairs if not self._credential(p)]
            if len(kept) < len(pairs):
                stripped = tuple(sorted({_name(p) for p in pairs if self._credential(p)}))
                target = path + ("?" + "&".join(kept) if kept else "")
        kind = target
        for rule in self.regexes:
            assert rule.pattern is not None
            kind = rule.pattern.sub(rule.replacement, kind)
        path, sep, query = kind.partition("?")
        path = "/".join(fold_segment(s) for s in path.split("/"))
        for rule in self.query_rules:
            query = _fold_query(query, rule)
        return Folded(target, path + ("?" + query if query else ""), stripped)

    def _credential(self, pair: str) -> bool:
        name = _name(pair)
        return name.lower() not in self.keep and bool(_CREDENTIAL_PARAM.search(name))


def _name(pair: str) -> str:
    return unquote_plus(pair.partition("=")[0])


def _fold_query(query: str, rule: FoldRule) -> str:
    if not query:
        return query
    pairs = query.split("&")
    if rule.kind is FoldKind.QUERY:
        return "&".join(p for p in pairs if _name(p) in rule.names)
    return "&".join(f"{p.partition('=')[0]}={{}}" if not rule.names or _name(p) in rule.names else p
                    for p in pairs)
