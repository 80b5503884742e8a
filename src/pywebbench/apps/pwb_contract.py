"""What CONTRACT.md fixes for every app: content types, the SQL texts, the JSON shapes of the
answers, and the PWB_* settings (`Config`). Standard library only: every stack imports it."""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

TEXT_PLAIN = "text/plain; charset=utf-8"
APPLICATION_JSON = "application/json"
TEXT_HTML = "text/html; charset=utf-8"

HELLO = b"Hello World!"
TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
TEMPLATE_NAME = "page.html"
TEMPLATE_CONTEXT: dict[str, Any] = json.loads((TEMPLATES_DIR / "context.json").read_text(encoding="utf-8"))

SYNC_DRIVERS = ("psycopg", "psycopg2", "psycopg2-gevent", "psycopg2-eventlet", "psycopg2-meinheld")
ASYNC_DRIVERS = ("asyncpg",)
UPSTREAM_TIMEOUT_S = 60.0

# Literal SQL, as the Go reference sends it: one simple-protocol round trip with psycopg
# and psycopg2, and valid behind PgBouncer in any pool mode. KEY and DELAY are ours, not input.
DB_SQL = "SELECT b.a, b.b FROM bench b, pg_sleep({delay}) WHERE b.a = {key}"
INSERT_SQL = "INSERT INTO writes (a) VALUES ({key})"
ROWS_SQL = "SELECT a, b FROM bench WHERE a <= {limit} ORDER BY a"
POSTS_SQL = ROWS_SQL.format(limit=300)  # the same text on PostgreSQL and SQLite
# asyncpg always prepares (extended protocol); parameters let its per-connection statement
# cache hit, so a pooled connection answers /db in one round trip.
DB_SQL_ASYNCPG = "SELECT b.a, b.b FROM bench b, pg_sleep($1) WHERE b.a = $2"


@dataclass(frozen=True)
class Config:
    driver: str
    dsn: str
    db_delay: float
    db_rows: int
    db_pool: int
    upstream_url: str
    cpu_size: int
    db: str = "postgresql"
    sqlite_path: str = ""

    @classmethod
    def from_env(cls) -> Config:
        cfg = cls(
            driver=os.environ.get("PWB_DRIVER") or "psycopg",
            dsn=os.environ.get("PWB_DSN", ""),
            db_delay=float(os.environ.get("PWB_DB_DELAY") or "0.02"),
            db_rows=int(os.environ.get("PWB_DB_ROWS") or "1000000"),
            db_pool=int(os.environ.get("PWB_DB_POOL") or "0"),
            upstream_url=os.environ.get("PWB_UPSTREAM_URL", ""),
            cpu_size=int(os.environ.get("PWB_CPU_SIZE") or "100000"),
            db=os.environ.get("PWB_DB") or "postgresql",
            sqlite_path=os.environ.get("PWB_SQLITE_PATH", ""),
        )
        if cfg.driver not in SYNC_DRIVERS + ASYNC_DRIVERS:
            raise ValueError(f"PWB_DRIVER must be one of {', '.join(SYNC_DRIVERS + ASYNC_DRIVERS)}, got {cfg.driver!r}")
        if cfg.db not in ("postgresql", "sqlite") or (cfg.db == "sqlite" and not cfg.sqlite_path):
            raise ValueError(f"PWB_DB must be postgresql or sqlite (with PWB_SQLITE_PATH), got {cfg.db!r}")
        if cfg.db_delay < 0 or cfg.db_rows < 1 or cfg.db_pool < 0 or cfg.cpu_size < 0:
            raise ValueError(f"bad PWB_* settings: {cfg}")
        return cfg

    def random_key(self) -> int:
        # random reseeds itself in a forked child, so workers draw different keys.
        return random.randrange(1, self.db_rows + 1)


@cache
def config() -> Config:
    return Config.from_env()


def is_async_driver() -> bool:
    return config().driver in ASYNC_DRIVERS


# --- JSON bodies from rows (exactly json.dumps of the CONTRACT.md objects) --------------------

def db_json(a: int, b: str) -> bytes:
    return json.dumps({"a": f"{a:010d}", "b": b}).encode()


def api_json(rows: Any) -> bytes:
    items = [{"a": a, "b": b} for a, b in rows if "a" <= b[:1] <= "m"]
    return json.dumps({"count": len(items), "items": items}).encode()


def posts_json(rows: Any) -> bytes:
    return json.dumps([{"id": a, "title": b} for a, b in rows]).encode()
