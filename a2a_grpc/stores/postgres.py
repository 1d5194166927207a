"""PostgreSQL task store (`--store postgresql://USER@HOST:PORT/DB`), via asyncpg.

A connection pool; each write is one transaction; migrations run under an
advisory lock so replicas starting together migrate once. Query parameters
of the URL that are not connection options become server settings, e.g.
`?search_path=myschema` (asyncpg's DSN rules); that schema is created when
it is not there.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from functools import cache
from typing import Any

import asyncpg

from a2a_grpc.stores.fence import Fence
from a2a_grpc.stores.pg_serving import ServingLock
from a2a_grpc.stores.sql import Row, SqlTaskStore, Tx

MIGRATION_LOCK = 0x0A2A_0001  # pg_advisory_xact_lock key


@cache
def numbered(sql: str) -> str:
    """`?` placeholders -> `$1, $2, ...` (none of our SQL has `?` in literals)."""
    count = iter(range(1, 10_000))
    return re.sub(r"\?", lambda _: f"${next(count)}", sql)


class _PgTx:
    def __init__(self, conn: asyncpg.Connection) -> None:
        self._conn = conn

    async def execute(self, sql: str, *args: Any) -> None:
        await self._conn.execute(numbered(sql), *args)

    async def executemany(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        await self._conn.executemany(numbered(sql), rows)

    async def fetch(self, sql: str, *args: Any) -> list[Row]:
        return list(await self._conn.fetch(numbered(sql), *args))


async def _schema_made(tx: Tx) -> None:
    """The schema `?search_path=` names first, created when it is not there
    yet (PostgreSQL would otherwise say only that no schema was selected to
    create in); nothing to do when the search path finds a schema."""
    [(found, setting)] = await tx.fetch(
        "SELECT current_schema(), current_setting('search_path')")
    if found is not None:
        return
    names = [n.strip() for n in str(setting).split(",")
             if n.strip() not in ("", '"$user"', "$user")]
    if not names:
        raise OSError("the PostgreSQL store's search_path names no schema: add "
                      "?search_path=SCHEMA to --store")
    name = names[0][1:-1].replace('""', '"') if names[0].startswith('"') else names[0]
    await tx.execute('CREATE SCHEMA IF NOT EXISTS "' + name.replace('"', '""') + '"')


class PostgresTaskStore(SqlTaskStore):
    dialect = "postgres"
    blob_type = "BYTEA"
    serial_type = "BIGSERIAL PRIMARY KEY"
    # InternalClientError: a pooled connection left mid-operation when the server
    # cut it ("another operation is in progress"), seen in `make chaos`.
    driver_errors = (asyncpg.PostgresError, asyncpg.InterfaceError, OSError,
                     asyncpg.exceptions.InternalClientError)

    def __init__(self, dsn: str, *, min_size: int = 1, max_size: int = 10,
                 snapshot_bytes: int = 64 * 1024) -> None:
        self._init_writes(snapshot_bytes)
        self.dsn = dsn
        self._sizes = (min_size, max_size)
        self._pool: asyncpg.Pool | None = None
        self._serving: ServingLock | None = None  # register_server's

    async def open(self) -> None:
        try:
            self._pool = await asyncpg.create_pool(
                self.dsn, min_size=self._sizes[0], max_size=self._sizes[1], timeout=10)
        except (asyncpg.PostgresError, OSError, asyncpg.InterfaceError) as exc:
            raise OSError(f"cannot connect to the PostgreSQL store: {exc}") from exc

        async def migrate(tx: Tx) -> None:
            await tx.fetch("SELECT pg_advisory_xact_lock(?)", MIGRATION_LOCK)
            await _schema_made(tx)
            await self._migrate(tx)

        await self._run(migrate)

    async def register_server(self, alone: bool) -> None:
        """A session advisory lock on the schema, kept (pg_serving.py)."""
        lock = ServingLock(self.dsn, alone)
        await lock.take()
        self._serving = lock

    async def close(self) -> None:
        try:
            if self._pool is not None:
                await self._drain_writes()
                await self._pool.close()
                self._pool = None
        finally:  # the store is let go once nothing more of this server can reach it
            if self._serving is not None:
                await self._serving.release()
                self._serving = None

    async def _run(self, work: Callable[[Tx], Awaitable[Any]]) -> Any:
        async with self._acquire() as conn, conn.transaction():
            return await work(_PgTx(conn))

    async def _fences_of(self, tx: Tx, keys: list[tuple[str, str]]
                         ) -> dict[tuple[str, str], Fence]:
        """The fence's reads (sql_batch.Fences). Replicas write at once: the task
        rows are locked first (FOR UPDATE, in key order so two batches never
        wait on each other in a circle), and held to the commit; a claim or
        another writer waits for them, and this waits for theirs and then reads
        what they committed. The last sequence numbers are read after the
        locks, by a statement of their own: it sees the events of every writer
        that held a lock before (a statement's snapshot is taken at its start)."""
        if not keys:
            return {}
        tenants, ids = [k[0] for k in keys], [k[1] for k in keys]
        rows = await tx.fetch(
            "SELECT t.tenant, t.id, t.state, t.epoch FROM unnest(?::text[], ?::text[]) "
            "AS k (tenant, id) JOIN a2a_tasks t ON t.tenant = k.tenant AND t.id = k.id "
            "ORDER BY t.tenant, t.id FOR UPDATE OF t", tenants, ids)
        # A scalar MAX per task: read from the end of the log's key (a join and
        # GROUP BY would read the whole log of each task, growing with it).
        last = {(r[0], r[1]): int(r[2]) for r in await tx.fetch(
            "SELECT k.tenant, k.id, (SELECT MAX(e.seq) FROM a2a_events e WHERE "
            "e.tenant = k.tenant AND e.task_id = k.id) FROM unnest(?::text[], ?::text[]) "
            "AS k (tenant, id)", tenants, ids) if r[2] is not None}
        return {(r[0], r[1]): Fence(last.get((r[0], r[1]), 0), int(r[2]), int(r[3]))
                for r in rows}

    async def _read(self, sql: str, *args: Any) -> list[Row]:
        async with self._acquire() as conn:
            return list(await conn.fetch(numbered(sql), *args))

    def _acquire(self) -> Any:
        if self._pool is None:
            raise asyncpg.InterfaceError("the store is not open")
        return self._pool.acquire()
