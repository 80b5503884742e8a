"""Where each role runs: the `--hosts hosts.toml` inventory (none given: everything local).

    [hosts.loadgen]
    address = "10.0.0.2"      # reached over SSH (the system client); user, port and key optional
    roles = ["generator"]

    [hosts.app]
    address = "10.0.0.3"
    user = "bench"
    key = "~/.ssh/bench_ed25519"
    roles = ["app", "db"]

A fleet for `--shards N` gives every host a `shard = 1..N`: each shard is a whole inventory
(its own app and generator hosts) that measures its block of stacks (plan/shards.py).

Roles: `generator` (one host or more), `app` (exactly one), `db` (PostgreSQL and pgbouncer)
and `upstream` (the Go upstream API), and `proxy` (nginx in front of the app, with
`--topology nginx`), each at most one host; a role no host takes stays on the app host. An
inventory placing `proxy` in a run without `--topology nginx` is refused (measure/placing.py),
rather than having nginx silently left out. Load goes to loopback, private networks or link-local addresses only, unless
`--allow-remote` says a public address is meant.
"""

from __future__ import annotations

import ipaddress
import re
import tomllib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import Any, Protocol

from pywebbench.core.errors import UserError
from pywebbench.plan.generators import Generator
from pywebbench.results.model import Method

_NAME = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,62}$")
_HOSTNAME = re.compile(r"^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_USER = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")


class Role(StrEnum):
    GENERATOR = "generator"
    APP = "app"
    DB = "db"
    UPSTREAM = "upstream"
    PROXY = "proxy"


@dataclass(frozen=True)
class Host:
    name: str
    address: str
    roles: tuple[Role, ...]
    user: str | None = None
    port: int = 22
    key: Path | None = None
    known_hosts: Path | None = None
    """Its own known_hosts file (the netns rig's); None: ssh's usual ones."""
    uv: Path | None = None
    """Where uv is on that host when not on its login PATH (nor ~/.local/bin, ~/.cargo/bin)."""
    offline: bool = False
    """No route to a package index: uv builds the staged environments there from its own cache
    (the netns rig's hosts, which share this machine's)."""
    shard: int | None = None
    """Which shard of a `--shards N` run the host belongs to (1..N; plan/shards.py)."""

    @property
    def local(self) -> bool:
        return self.address in ("localhost", "127.0.0.1", "::1")


@dataclass(frozen=True)
class Inventory:
    hosts: tuple[Host, ...]

    def host_of(self, role: Role) -> Host:
        """The one host of a single-host role; a role no host takes runs on the app host."""
        for host in self.hosts:
            if role in host.roles:
                return host
        return self.host_of(Role.APP)

    @property
    def generators(self) -> tuple[Host, ...]:
        return tuple(h for h in self.hosts if Role.GENERATOR in h.roles)

    def shards(self) -> dict[int | None, Inventory]:
        """The hosts of each shard (a `--shards N` fleet), or {None: all of them}."""
        groups: dict[int | None, list[Host]] = {}
        for host in self.hosts:
            groups.setdefault(host.shard, []).append(host)
        return {shard: Inventory(tuple(members)) for shard, members in sorted(groups.items(), key=lambda kv: kv[0] or 0)}


def load_inventory(path: Path, *, allow_remote: bool = False) -> Inventory:
    return parse_inventory(read_inventory(path), str(path), allow_remote=allow_remote)


def read_inventory(path: Path) -> dict[str, Any]:
    """The file's tables as TOML gives them (a fleet is split from these: plan/shards.py)."""
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UserError(f"cannot read the inventory {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UserError(f"the inventory {path} does not parse: {exc}") from None


def parse_inventory(data: dict[str, Any], source: str = "the inventory", *,
                    allow_remote: bool = False) -> Inventory:
    unknown = sorted(set(data) - {"hosts"})
    if unknown:
        raise UserError(f"{source}: unknown table {unknown[0]!r} (only [hosts.NAME] tables)")
    tables = data.get("hosts")
    if not isinstance(tables, dict) or not tables:
        raise UserError(f"{source}: no host (add a [hosts.NAME] table with address and roles)")
    hosts = tuple(_host(name, table, source, allow_remote) for name, table in tables.items())
    sharded = [h.name for h in hosts if h.shard is not None]
    if sharded and len(sharded) != len(hosts):
        bare = next(h.name for h in hosts if h.shard is None)
        raise UserError(f"{source}: host {sharded[0]!r} names a shard and {bare!r} does not; give every host one or none")
    for shard, members in Inventory(hosts).shards().items():
        _check_roles(members.hosts, source if shard is None else f"{source}: shard {shard}")
    return Inventory(hosts)


def _host(name: str, table: Any, source: str, allow_remote: bool) -> Host:
    where = f"{source}: host {name!r}"
    if not _NAME.match(name):
        raise UserError(f"{where}: a host name is letters, digits, '_', '.' and '-'")
    if not isinstance(table, dict):
        raise UserError(f"{where} must be a table")
    unknown = sorted(set(table) - {"address", "roles", "user", "port", "key", "known_hosts", "uv", "offline", "shard"})
    if unknown:
        raise UserError(f"{where}: unknown key {unknown[0]!r} "
                        "(address, roles, user, port, key, known_hosts, uv, offline, shard)")
    address = table.get("address")
    if not isinstance(address, str) or not address:
        raise UserError(f"{where} needs an address")
    _check_address(address, where, allow_remote)
    roles = _roles(table.get("roles"), where)
    user = table.get("user")
    if user is not None and (not isinstance(user, str) or not _USER.match(user)):
        raise UserError(f"{where}: user {user!r} is not a user name")
    port = table.get("port", 22)
    if not isinstance(port, int) or isinstance(port, bool) or not 1 <= port <= 65535:
        raise UserError(f"{where}: port must be a whole number from 1 to 65535")
    paths = {}
    for field in ("key", "known_hosts", "uv"):
        value = table.get(field)
        if value is not None and not isinstance(value, str):
            raise UserError(f"{where}: {field} must be a path")
        paths[field] = Path(value).expanduser() if value else None
    offline = table.get("offline", False)
    if not isinstance(offline, bool):
        raise UserError(f"{where}: offline must be true or false")
    shard = table.get("shard")
    if shard is not None and (not isinstance(shard, int) or isinstance(shard, bool) or shard < 1):
        raise UserError(f"{where}: shard must be a whole number from 1")
    return Host(name, address, roles, user, port, paths["key"], paths["known_hosts"], paths["uv"], offline, shard)


def _roles(value: Any, where: str) -> tuple[Role, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise UserError(f"{where} needs roles, a list such as [\"generator\"]")
    try:
        roles = tuple(Role(v) for v in value)
    except ValueError:
        bad = next(v for v in value if v not in {r.value for r in Role})
        raise UserError(f"{where}: unknown role {bad!r} ({', '.join(r.value for r in Role)})") from None
    if len(set(roles)) != len(roles):
        raise UserError(f"{where} names a role twice")
    return roles


def _check_address(address: str, where: str, allow_remote: bool) -> None:
    try:
        ip = ipaddress.ip_address(address)
    except ValueError:
        if address == "localhost" or _HOSTNAME.match(address):
            return  # a name: resolved (and checked again) when the host is reached
        raise UserError(f"{where}: {address!r} is neither an IP address nor a host name") from None
    if not (ip.is_loopback or ip.is_private or ip.is_link_local) and not allow_remote:
        raise UserError(f"{where}: {address} is a public address; pass --allow-remote if load should go there")


def _check_roles(hosts: tuple[Host, ...], source: str) -> None:
    for role in Role:
        holders = [h.name for h in hosts if role in h.roles]
        if role is not Role.GENERATOR and len(holders) > 1:
            raise UserError(f"{source}: role {role.value!r} is on {holders[0]!r} and {holders[1]!r}; it takes one host")
    if not any(Role.APP in h.roles for h in hosts):
        raise UserError(f"{source}: no host takes the app role")
    if not any(Role.GENERATOR in h.roles for h in hosts):
        raise UserError(f"{source}: no host takes the generator role")


class PlacedOptions(Protocol):
    """What of the run's options decides where roles go (RunOptions; a Protocol: options imports us)."""

    @property
    def hosts(self) -> str | None: ...
    @property
    def topology(self) -> str: ...
    @property
    def rtt_s(self) -> float | None: ...
    @property
    def generator(self) -> Generator: ...
    @property
    def method(self) -> Method: ...
    @property
    def db(self) -> str: ...
    @property
    def placed(self) -> bool: ...


def check_placement(options: PlacedOptions) -> None:
    """Roles on several hosts, or an --rtt, with what they need; a bad combination is one line."""
    if options.hosts is not None and options.topology not in ("direct", "nginx"):
        raise UserError(f"--hosts places the roles itself: it takes --topology direct or nginx (nginx on the "
                        f"proxy role's host), not {options.topology}")
    if options.rtt_s is not None and not options.placed:
        raise UserError("--rtt delays the links between hosts, and on a single host there are none: "
                        "add --hosts HOSTS_TOML or --topology netns")
    if options.rtt_s is not None and options.rtt_s < 0:
        raise UserError("--rtt must not be negative")
    if options.placed and not options.generator.on_several_hosts:
        raise UserError(f"several hosts load with wrk on the generator hosts; --generator {options.generator} "
                        "is not supported there")
    if options.placed and not options.method.on_several_hosts:
        raise UserError("--method duet is not supported on several hosts yet: use interleaved or restart")
    if options.placed and options.db == "sqlite":
        raise UserError("--db sqlite reads a file on the app host; several hosts need PostgreSQL")
