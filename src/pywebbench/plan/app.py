"""A person's own WSGI or ASGI app as something to plan: its target, its servers, its traffic.

`pywebbench app --app mysite.wsgi:application` becomes a Framework carrying the target (so
every server's argv builder serves it instead of the built-in app), one Stack per compatible
server, and one workload, `app`, whose traffic is the `--request` mix. The deploy command
shown for each row comes from the same argv builder the launch used.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pywebbench.catalog.model import ConcurrencyType, Framework, Interface, ServerVariant
from pywebbench.catalog.workloads import Expected, HttpRequest, Needs, Workload
from pywebbench.core.errors import UserError
from pywebbench.plan.traffic import RequestSpec

APP_FRAMEWORK = "app"
"""The framework name of a person's own app: its stacks read `app:gunicorn-gthread`."""
APP_WORKLOAD = "app"
APP_DIR_ENV = "PWB_APP_DIR"
"""Where the app lives; its servers start there (measure/launchers.py reads the same name)."""
_DOTTED = r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
_TARGET = re.compile(rf"^({_DOTTED}):({_DOTTED})$")
_ENV_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_RESERVED_ENV = ("PATH", "VIRTUAL_ENV", "PYTHONPATH", APP_DIR_ENV)


@dataclass(frozen=True)
class AppTarget:
    target: str
    """`module:callable`, e.g. `mysite.wsgi:application`."""
    app_dir: Path
    factory: bool = False
    requirements: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    """--env and --env-file, in order (a later one wins)."""

    @property
    def process_env(self) -> dict[str, str]:
        """What the app's processes get: its --env, and the app dir on the import path."""
        return {**dict(self.env), "PYTHONPATH": str(self.app_dir), APP_DIR_ENV: str(self.app_dir)}


def parse_target(text: str) -> str:
    if not _TARGET.match(text):
        raise UserError(f"--app {text!r} must look like MODULE:CALLABLE (e.g. mysite.wsgi:application)")
    return text


def parse_env(items: Sequence[str], env_file: Path | None) -> tuple[tuple[str, str], ...]:
    """--env-file's KEY=VALUE lines (blank and # lines skipped), then each --env KEY=VALUE."""
    pairs: list[tuple[str, str]] = []
    if env_file is not None:
        try:
            lines = env_file.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise UserError(f"cannot read --env-file {env_file}: {getattr(exc, 'strerror', None) or exc}") from None
        for number, line in enumerate(lines, start=1):
            text = line.strip()
            if text and not text.startswith("#"):
                pairs.append(_env_pair(text.removeprefix("export "), f"--env-file {env_file} line {number}"))
    pairs += [_env_pair(item, "--env") for item in items]
    return tuple(pairs)


def _env_pair(text: str, where: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not _ENV_KEY.match(key):
        raise UserError(f"{where}: {text!r} must look like KEY=VALUE")
    if key in _RESERVED_ENV:
        raise UserError(f"{where}: {key} is set by the harness (use --app-dir for the import path)")
    value = value.strip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    return key, value


def app_framework(app: AppTarget, interface: Interface) -> Framework:
    return Framework(APP_FRAMEWORK, app.target, frozenset({interface}), app.requirements,
                     target=app.target, factory=app.factory, env=tuple(sorted(app.process_env.items())))


def candidate_servers(servers: Sequence[ServerVariant], interface: Interface) -> list[ServerVariant]:
    """Servers that serve any app of this interface (not a framework's own, not Flask's dev server)."""
    return [s for s in servers if s.interface is interface and s.own_framework is None
            and s.only_frameworks is None and s.native is None]


def select_servers(servers: Sequence[ServerVariant], patterns: Sequence[str], interface: Interface, *,
                   allow_monkeypatch: bool, factory: bool) -> tuple[list[ServerVariant], list[tuple[str, str]]]:
    """The servers `--server` names (globs over keys such as `gunicorn-*`), else every one for the
    interface; returns them and (key, reason) for servers a default or a glob left out."""
    fit = candidate_servers(servers, interface)
    skipped: dict[str, str] = {}

    def problem(server: ServerVariant) -> str | None:
        if server.unavailable:
            return f"unavailable here: {server.unavailable}"
        if server.concurrency is ConcurrencyType.GREENLET and not allow_monkeypatch:
            return "monkey-patches the app (greenlets): only with --allow-monkeypatch"
        if factory and server.key == "uwsgi":
            return "uWSGI imports a callable and cannot call an app factory (--factory)"
        return None

    chosen: dict[str, ServerVariant] = {}
    for pattern in patterns or ["*"]:
        if any(ch in pattern for ch in "*?["):
            matches = [s for s in fit if fnmatch.fnmatchcase(s.key, pattern)]
            if not matches:
                raise UserError(f"--server {pattern!r} matches no {interface.value} server; "
                                f"known: {', '.join(s.key for s in fit)}")
            for server in matches:
                why = problem(server)
                if why is None:
                    chosen.setdefault(server.key, server)
                else:
                    skipped[server.key] = why
            continue
        server = _named(servers, fit, pattern, interface)
        why = problem(server)
        if why is not None:
            raise UserError(f"--server {pattern}: {server.key} {why}")
        chosen.setdefault(server.key, server)
    if not chosen:
        raise UserError(f"no {interface.value} server left to run: "
                        + "; ".join(f"{key} {why}" for key, why in sorted(skipped.items())))
    return list(chosen.values()), sorted(skipped.items())


def _named(servers: Sequence[ServerVariant], fit: Sequence[ServerVariant], name: str,
           interface: Interface) -> ServerVariant:
    """A server by key (`gunicorn-gthread`), or by server name for the interface (`granian`)."""
    for server in fit:
        if server.key == name:
            return server
    by_server = [s for s in fit if s.server == name]
    if by_server:
        return by_server[0]
    other = next((s for s in servers if s.key == name or s.server == name), None)
    if other is not None:
        serves = other.interface.value if other.own_framework is None and other.only_frameworks is None \
            else f"{other.own_framework or ', '.join(sorted(other.only_frameworks or ()))} only"
        raise UserError(f"--server {name}: {other.key} serves {serves}, not this {interface.value} app")
    raise UserError(f"--server {name}: unknown server; {interface.value} servers: {', '.join(s.key for s in fit)}")


def app_workload(requests: Sequence[RequestSpec], expect_status: int, expect_body: str | None,
                 with_postgres: bool, ignore_fields: Sequence[str] = ()) -> Workload:
    """The `app` workload: the traffic mix, checked by status and an optional body substring;
    its answers are compared across servers except at `ignore_fields`."""
    needle = expect_body.encode() if expect_body is not None else None

    def check(body: bytes, expected: Expected) -> str | None:
        if needle is not None and needle not in body:
            return f"body {body[:80]!r} does not contain {expect_body!r}"
        return None

    mix = tuple(HttpRequest(r.method, r.path, r.body, r.headers, r.weight) for r in requests)
    described = ", ".join(f"{r.label} x{r.weight}" if len(mix) > 1 else r.label for r in mix)
    return Workload(APP_WORKLOAD, mix[0].path, "", f"your app: {described}", check,
                    frozenset({Needs.DATABASE}) if with_postgres else frozenset(), requests=mix,
                    expect_status=expect_status, ignore_fields=tuple(ignore_fields))
