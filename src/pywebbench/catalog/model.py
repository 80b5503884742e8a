"""Value types of the catalog: interfaces, concurrency types, frameworks, servers, stacks."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

from pywebbench.catalog.protocols import H1_ONLY, Protocol, TlsFiles


class Interface(StrEnum):
    WSGI = "WSGI"
    ASGI = "ASGI"
    OWN = "own"


class ConcurrencyType(StrEnum):
    """Seed 000's three types: how a stack overlaps the requests it serves."""

    SYNC = "Sync"
    GREENLET = "Async-Greenlet"
    COROUTINE = "Async-Coroutine"
    REFERENCE = "Reference"
    """Not Python: the Go server and nginx, the yardsticks the Python stacks are read against."""


DEFAULT_DRIVERS: dict[ConcurrencyType, str] = {
    ConcurrencyType.SYNC: "psycopg",
    ConcurrencyType.GREENLET: "psycopg2-gevent",
    ConcurrencyType.COROUTINE: "asyncpg",
    ConcurrencyType.REFERENCE: "native",
}

# What each driver adds to a stack's environment (jinja2 for /template everywhere).
DRIVER_REQUIREMENTS: dict[str, tuple[str, ...]] = {
    "psycopg": ("psycopg[binary]==3.3.9", "psycopg-pool==3.3.3"),
    "psycopg2-gevent": ("psycopg2-binary==2.9.13", "psycogreen==1.0.2"),
    "psycopg2-eventlet": ("psycopg2-binary==2.9.13", "psycogreen==1.0.2"),
    "psycopg2-meinheld": ("psycopg2-binary==2.9.13",),
    # Blocking psycopg2, nothing patched: seed 000's bug, for the contrast. (psycopg 3 notices
    # gevent's monkey-patching by itself, so it cannot show the bug.)
    "psycopg2": ("psycopg2-binary==2.9.13",),
    "asyncpg": ("asyncpg==0.32.0", "aiohttp==3.14.5"),
    "native": (),
}
ASYNC_DRIVERS = frozenset({"asyncpg"})
"""Drivers the apps await (apps/pwb_contract.ASYNC_DRIVERS); every other one blocks its thread or greenlet."""
COMMON_APP_REQUIREMENTS: tuple[str, ...] = ("jinja2==3.1.6",)

DB_KINDS = ("postgresql", "sqlite")
"""Where /posts reads from: PostgreSQL through pgbouncer, or a SQLite file (seed 001's DB)."""
SQLITE_ASYNC_REQUIREMENTS: tuple[str, ...] = ("databases==0.9.0", "aiosqlite==0.22.1", "sqlalchemy==2.0.58")
"""The async SQLite client seed 001's Starlette app used (`databases` over aiosqlite); databases
0.9.0 predates SQLAlchemy 2.1, so 2.0 is pinned. Sync stacks use the standard library's sqlite3."""


@dataclass(frozen=True)
class Framework:
    name: str
    title: str
    interfaces: frozenset[Interface]
    requirements: tuple[str, ...]
    overrides: tuple[str, ...] = ()
    unavailable: str | None = None
    native: bool = False
    target: str | None = None
    """A person's own app, `module:callable` (the `app` command); None for the built-in apps."""
    factory: bool = False
    """target names a factory that returns the app (`--factory`)."""
    env: tuple[tuple[str, str], ...] = ()
    """The own app's environment (--env, its import path): given to its servers, never recorded
    (a person's --env may hold secrets)."""

    @property
    def module(self) -> str:
        return f"app_{self.name}"


@dataclass(frozen=True)
class LaunchSpec:
    """Everything a server adapter needs to build the command that starts one stack."""

    python: str
    module: str
    host: str
    port: int
    workers: int
    threads: int
    target: str | None = None
    """`module:callable` of a person's own app, served instead of the built-in `module`'s."""
    factory: bool = False
    """target is a factory: the server calls it to get the app."""
    tls: TlsFiles | None = None
    """The run's certificate and key: the server terminates TLS itself (h1-tls, h2-tls)."""


ArgvBuilder = Callable[[LaunchSpec], list[str]]


@dataclass(frozen=True)
class ServerVariant:
    """One server run in one worker model, e.g. Gunicorn with gevent workers."""

    server: str
    variant: str
    title: str
    worker_class: str
    interface: Interface
    concurrency: ConcurrencyType
    requirements: tuple[str, ...]
    build_argv: ArgvBuilder
    event_loop: str = "-"
    http_parser: str = "-"
    threaded: bool = False
    single_process: bool = False
    overrides: tuple[str, ...] = ()
    own_framework: str | None = None
    only_frameworks: frozenset[str] | None = None
    unavailable: str | None = None
    notes: str = ""
    driver: str | None = None
    """PWB_DRIVER for this server when its concurrency type's default is wrong (greenlet hubs)."""
    native: str | None = None
    """Not a Python stack: 'go-reference' or 'nginx'; no uv environment is built for it."""
    workloads: frozenset[str] | None = None
    """The workloads this server can serve, when not all of them (nginx serves static only)."""
    protocols: frozenset[Protocol] = H1_ONLY
    """The protocols it serves (catalog/protocols.py): TLS from its own flags, h2c by prior knowledge."""

    @property
    def key(self) -> str:
        return f"{self.server}-{self.variant}" if self.variant else self.server


@dataclass(frozen=True)
class Stack:
    framework: Framework
    server: ServerVariant
    extra_requirements: tuple[str, ...] = field(default=())
    stack_unavailable: str | None = None
    driver_override: str | None = None
    """A driver chosen by the user, e.g. a blocking one under gevent to show seed 000's bug."""
    db: str = "postgresql"
    """What /posts reads (DB_KINDS); the other DB workloads always use PostgreSQL."""

    @property
    def id(self) -> str:
        return f"{self.framework.name}:{self.server.key}"

    @property
    def concurrency(self) -> ConcurrencyType:
        return self.server.concurrency

    @property
    def requirements(self) -> tuple[str, ...]:
        if self.server.native is not None:
            return ()
        # A person's own app brings its own database client and templates: none of the
        # built-in app's drivers, which could clash with its pins.
        own = self.framework.target is not None
        merged = dict.fromkeys(
            self.framework.requirements
            + self.server.requirements
            + (() if own else DRIVER_REQUIREMENTS[self.driver] + COMMON_APP_REQUIREMENTS)
            + (SQLITE_ASYNC_REQUIREMENTS if self.db == "sqlite" and self.driver in ASYNC_DRIVERS else ())
            + self.extra_requirements
        )
        return tuple(sorted(merged))

    @property
    def overrides(self) -> tuple[str, ...]:
        return tuple(sorted(dict.fromkeys(self.framework.overrides + self.server.overrides)))

    @property
    def driver(self) -> str:
        """How the app reaches the database and the upstream without blocking its workers."""
        if self.driver_override is not None:
            return self.driver_override
        if self.server.driver is not None:
            return self.server.driver
        return DEFAULT_DRIVERS[self.concurrency]

    @property
    def db_client(self) -> str:
        """The client /posts reads through, as results record it: the driver on PostgreSQL;
        on SQLite, sqlite3 under a sync driver (threads, greenlets, Starlette's thread pool)
        and databases over aiosqlite under an async one."""
        if self.db != "sqlite" or self.server.native is not None:
            return self.driver
        return "databases-aiosqlite" if self.driver in ASYNC_DRIVERS else "sqlite3"

    @property
    def unavailable(self) -> str | None:
        return self.framework.unavailable or self.server.unavailable or self.stack_unavailable

    def default_workers(self, cpus: int) -> int:
        """Seed 000's rule: sync stacks get 2 x CPUs + 1 workers, async stacks one per CPU."""
        if self.server.single_process:
            return 1
        if self.concurrency is ConcurrencyType.SYNC:
            return 2 * cpus + 1
        if self.concurrency is ConcurrencyType.REFERENCE:
            return 1  # one process; Go and nginx use every CPU they are given
        return cpus
