"""SQLite task store (`--store sqlite:///PATH`), the embedded default.

One connection in WAL mode (readers never wait for the writer's fsync),
`synchronous=NORMAL` (a committed write survives a process crash; an OS crash
may lose the last transactions), a 5 s busy timeout, and an asyncio lock so
the transactions of concurrent calls never interleave on the connection.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiosqlite

from .sql import Row, SqlTaskStore, Tx


class _SqliteTx:
    def __init__(self, conn: aiosqlite.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, *args: Any) -> None:
        await self._conn.execute(sql, args)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        async with self._conn.execute(sql, args) as cursor:
            return list(await cursor.fetchall())


class SqliteTaskStore(SqlTaskStore):
    blob_type = "BLOB"
    driver_errors = (sqlite3.Error, OSError)

    def __init__(self, path: str | Path, *, busy_timeout_ms: int = 5000) -> None:
        self.path = Path(path)
        self.busy_timeout_ms = busy_timeout_ms
        self._conn: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._conn = await aiosqlite.connect(self.path, isolation_level=None)
            for pragma in ("journal_mode=WAL", "synchronous=NORMAL",
                           f"busy_timeout={self.busy_timeout_ms}"):
                await self._conn.execute(f"PRAGMA {pragma}")
        except (sqlite3.Error, OSError) as exc:
            raise OSError(f"cannot open the SQLite store at {self.path}: {exc}") from exc
        await self._run(self._migrate)

    async def close(self) -> None:
        if self._conn is not None:
            async with self._lock:
                await self._conn.close()
            self._conn = None

    async def _run(self, work: Callable[[Tx], Awaitable[Any]]) -> Any:
        conn = self._connection()
        async with self._lock:
            await conn.execute("BEGIN IMMEDIATE")
            try:
                result = await work(_SqliteTx(conn))
            except BaseException:
                await conn.execute("ROLLBACK")
                raise
            await conn.execute("COMMIT")
            return result

    async def _read(self, sql: str, *args: Any) -> list[Row]:
        conn = self._connection()
        async with self._lock, conn.execute(sql, args) as cursor:
            return list(await cursor.fetchall())

    def _connection(self) -> aiosqlite.Connection:
        if self._conn is None:
            raise sqlite3.OperationalError("the store is not open")
        return self._conn
