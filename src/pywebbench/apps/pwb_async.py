"""/db, /api, /posts and /upstream for ASGI stacks (`AsyncBackend`, one per event loop):
asyncpg, one aiohttp session, and `databases` over aiosqlite for seed 001's SQLite."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from pwb_contract import (
    DB_SQL_ASYNCPG,
    INSERT_SQL,
    POSTS_SQL,
    ROWS_SQL,
    UPSTREAM_TIMEOUT_S,
    Config,
    api_json,
    db_json,
    posts_json,
)


class AsyncBackend:
    """/db, /api, /posts and /upstream for ASGI stacks (asyncpg + aiohttp); one per event loop."""

    def __init__(self, cfg: Config) -> None:
        self.cfg = cfg
        self._pool: Any = None
        self._session: Any = None
        self._sqlite: Any = None  # a databases.Database, connected on first use
        self._lock = asyncio.Lock()  # binds to the loop on first use (Python >= 3.10)

    @asynccontextmanager
    async def _conn(self) -> AsyncIterator[Any]:
        import asyncpg

        if self.cfg.db_pool == 0:
            conn = await asyncpg.connect(self.cfg.dsn)
            try:
                yield conn
            finally:
                await conn.close()
            return
        if self._pool is None:
            async with self._lock:
                if self._pool is None:
                    self._pool = await asyncpg.create_pool(
                        self.cfg.dsn, min_size=self.cfg.db_pool, max_size=self.cfg.db_pool)
        async with self._pool.acquire() as conn:
            yield conn

    async def db(self) -> bytes:
        async with self._conn() as conn:
            row = await conn.fetchrow(DB_SQL_ASYNCPG, self.cfg.db_delay, self.cfg.random_key())
        return db_json(row[0], row[1])

    async def api(self) -> bytes:
        async with self._conn() as conn:
            await conn.execute(INSERT_SQL.format(key=self.cfg.random_key()))  # no args: simple protocol
            rows = await conn.fetch(ROWS_SQL.format(limit=100))
        return api_json(rows)

    async def posts(self) -> bytes:
        if self.cfg.db == "sqlite":
            database = await self._sqlite_database()
            records = await database.fetch_all(POSTS_SQL)
            return posts_json((r[0], r[1]) for r in records)
        async with self._conn() as conn:
            rows = await conn.fetch(POSTS_SQL)
        return posts_json(rows)

    async def _sqlite_database(self) -> Any:
        """Seed 001's Starlette client: one `databases.Database` per loop, connected once."""
        if self._sqlite is None:
            async with self._lock:
                if self._sqlite is None:
                    import databases

                    database = databases.Database("sqlite+aiosqlite:///" + str(Path(self.cfg.sqlite_path).resolve()))
                    await database.connect()
                    self._sqlite = database
        return self._sqlite

    async def upstream(self) -> bytes:
        if not self.cfg.upstream_url:
            raise RuntimeError("PWB_UPSTREAM_URL is not set")
        if self._session is None:  # created inside the running loop it belongs to
            import aiohttp

            # limit=0: no cap on connections per host, one per request in flight, like Go's client.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0),
                timeout=aiohttp.ClientTimeout(total=UPSTREAM_TIMEOUT_S),
            )
        async with self._session.get(self.cfg.upstream_url) as resp:
            body = await resp.read()
            if resp.status != 200:
                raise RuntimeError(f"upstream answered {resp.status}")
        return bytes(body)

    async def aclose(self) -> None:
        """For ASGI lifespan shutdown: close the pool and the HTTP session."""
        if self._session is not None:
            await self._session.close()
            self._session = None
        if self._pool is not None:
            await self._pool.close()
            self._pool = None
        if self._sqlite is not None:
            await self._sqlite.disconnect()
            self._sqlite = None
