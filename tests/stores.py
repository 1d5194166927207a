"""The task stores under test, each on its real backend.

PostgreSQL is the server on loopback (A2A_TEST_POSTGRES, default
postgresql://postgres@127.0.0.1:5432/test); each test gets a schema of its
own. Without a reachable server the PostgreSQL cases skip, except under CI
(CI=true), where that is a failure.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from a2a_grpc.stores import MemoryTaskStore, TaskStore
from a2a_grpc.stores.memory_plain import PlainTasks
from a2a_grpc.stores.postgres import PostgresTaskStore
from a2a_grpc.stores.shards import ShardedSqliteStore
from a2a_grpc.stores.sqlite import SqliteTaskStore

POSTGRES = os.environ.get("A2A_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")
KINDS = ["memory", "plain", "sqlite", "shards", "postgres"]
# plain: the memory store's plain table; shards: SQLite in 3 shards (stores/shards.py),
# each store made a worker of its own shard (1, 2, 0, ...), so what one writes another reads


async def postgres_schema() -> str:
    """A fresh schema on the test server (skip, or fail under CI, without one)."""
    import asyncpg

    try:
        conn = await asyncpg.connect(POSTGRES, timeout=5)
    except (OSError, asyncpg.PostgresError) as exc:
        message = f"PostgreSQL at {POSTGRES} is unreachable ({exc}); set A2A_TEST_POSTGRES"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    schema = f"t_{uuid.uuid4().hex[:12]}"
    await conn.execute(f"CREATE SCHEMA {schema}")
    await conn.close()
    return schema


async def drop_schema(schema: str) -> None:
    import asyncpg

    conn = await asyncpg.connect(POSTGRES, timeout=5)
    await conn.execute(f"DROP SCHEMA {schema} CASCADE")
    await conn.close()


def postgres_url(schema: str) -> str:
    sep = "&" if "?" in POSTGRES else "?"
    return f"{POSTGRES}{sep}search_path={schema}"


@asynccontextmanager
async def durable_store_url(kind: str, tmp_path: Path) -> AsyncIterator[str]:
    """A `--store` URL of a fresh durable store: "sqlite" (a file in `tmp_path`)
    or "postgres" (a schema of its own, dropped after)."""
    if kind == "sqlite":
        yield f"sqlite:///{tmp_path / 'tasks.db'}"
        return
    schema = await postgres_schema()
    try:
        yield postgres_url(schema)
    finally:
        await drop_schema(schema)


Maker = Callable[[], Awaitable[TaskStore]]


@asynccontextmanager
async def store_maker(kind: str, tmp_path: Path) -> AsyncIterator[Maker]:
    """Makes stores of `kind` that share one backing database (to test reopening)."""
    opened: list[TaskStore] = []
    schema = await postgres_schema() if kind == "postgres" else ""
    memory = MemoryTaskStore(PlainTasks()) if kind == "plain" else MemoryTaskStore()

    async def make() -> TaskStore:
        store: TaskStore
        if kind in ("memory", "plain"):
            store = memory
        elif kind == "sqlite":
            store = SqliteTaskStore(tmp_path / "tasks.db")
        elif kind == "shards":
            store = ShardedSqliteStore(tmp_path / "tasks.db", own=len(opened) + 1, count=3)
        else:
            store = PostgresTaskStore(postgres_url(schema))
        await store.open()
        opened.append(store)
        return store

    try:
        yield make
    finally:
        for store in opened:
            await store.close()
        if schema:
            await drop_schema(schema)
