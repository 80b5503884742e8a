"""What a `pin` knob value asks for: one package at a version or from a source, in place of the
version the catalog pins in every stack's environment.

    gunicorn==22.0.0                      a release (any PEP 508 specifier: gunicorn>=22,<23)
    granian@git+https://host/granian@v2   a git ref (NAME @ URL: uv's direct references)
    tinypkg@git+file:///src/tinypkg@abc1  a commit of a local repository
    granian@/src/granian, /src/granian    a local checkout (the name from its pyproject.toml)

The name is normalised as PyPI does (PEP 503), so `Flask_Login` pins flask-login. Refs are
turned into commits, and checkouts fingerprinted, where environments are built (stage/pinning.py).
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from pywebbench.core.errors import UserError

_NAME = re.compile(r"^(?P<name>[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?P<extras>\[[^\]]*\])?\s*(?P<rest>.*)$")
_SPECIFIER = re.compile(r"^(?:(?:===|==|!=|~=|>=|<=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)+$")
OPERATOR_START = ("=", "<", ">", "!", "~")
"""An item of a comma-split list that starts so continues the previous specifier (>=22,<23)."""


@dataclass(frozen=True)
class Pin:
    text: str
    """As recorded and shown, normalised: 'gunicorn==22.0.0', 'tinypkg@git+file:///r@v1'."""
    name: str
    """The package, normalised (PEP 503)."""
    requirement: str
    """What uv is given, before refs become commits."""
    local: Path | None = None
    """A local checkout (a directory, not a git URL): fingerprinted for the environment's hash."""


def normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def split_values(text: str) -> list[str]:
    """A --knob pin=... list: split on commas, a specifier's own commas kept (gunicorn>=22,<23)."""
    items: list[str] = []
    for item in text.split(","):
        if items and item.strip().startswith(OPERATOR_START):
            items[-1] += "," + item.strip()
        else:
            items.append(item.strip())
    return items


def parse_pin(text: str) -> Pin:
    raw = text.strip()
    if raw.startswith(("/", "./", "../", "~")):
        path = Path(raw).expanduser().resolve()
        return _local(project_name(path) if path.is_dir() else path.name, path)
    match = _NAME.match(raw)
    if match is None:
        raise UserError(f"pin: {raw!r} is not a requirement: NAME==VERSION, NAME@git+URL@REF or a local checkout")
    name, extras, rest = match["name"], match["extras"] or "", match["rest"].strip()
    if rest.startswith("@"):
        source = rest[1:].strip()
        if source.startswith(("/", "./", "../", "~", "file:///")) and not source.startswith("git+"):
            return _local(name, Path(source.removeprefix("file://")).expanduser().resolve(), extras)
        if not re.match(r"^(git\+)?(https?|file|ssh)://", source):
            raise UserError(f"pin: {raw!r}: after @ comes a URL (git+https://..., git+file:///...@REF) or a path")
        return Pin(f"{normalise(name)}{extras}@{source}", normalise(name), f"{name}{extras} @ {source}")
    if not rest or not _SPECIFIER.match(rest):
        raise UserError(f"pin: {raw!r} names no version: give NAME==VERSION (or >=, ~=, a git ref, a path)")
    spec = re.sub(r"\s+", "", rest)
    return Pin(f"{normalise(name)}{extras}{spec}", normalise(name), f"{name}{extras}{spec}")


def _local(name: str, path: Path, extras: str = "") -> Pin:
    if not path.is_dir():
        raise UserError(f"pin: {path} is not a directory (a local checkout of a package)")
    return Pin(f"{normalise(name)}{extras}@{path}", normalise(name), f"{name}{extras} @ {path.as_uri()}", path)


def project_name(path: Path) -> str:
    """The distribution name a checkout declares: pyproject.toml's [project] name, else setup.cfg's."""
    pyproject = path / "pyproject.toml"
    try:
        if pyproject.is_file():
            name = tomllib.loads(pyproject.read_text()).get("project", {}).get("name")
            if isinstance(name, str) and name:
                return name
        setup_cfg = path / "setup.cfg"
        if setup_cfg.is_file():
            found = re.search(r"^\[metadata\][^\[]*?^name\s*=\s*(\S+)", setup_cfg.read_text(), re.M | re.S)
            if found:
                return found.group(1)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise UserError(f"pin: cannot read {path}'s name: {exc}") from None
    raise UserError(f"pin: {path} declares no name (no [project] name in pyproject.toml): write NAME@{path}")
