"""Task stores: tasks, their event logs, message ids and webhook configs.

`open_store(url)` picks one: `memory`, `sqlite:///PATH` (relative) or
`sqlite:////abs/path`, `postgresql://...` (or `postgres://...`).
"""

from __future__ import annotations

import re
from pathlib import Path

from a2a_grpc.core.extras import MissingExtraError, missing
from a2a_grpc.stores.base import (
    COMMITTED,
    Appended,
    AppendedEvent,
    Claim,
    Delivery,
    LeaseStore,
    PushStore,
    Scope,
    StoredTask,
    TaskLog,
    TaskStore,
)
from a2a_grpc.stores.errors import (
    MessageTakenError,
    StoreInUseError,
    StoreOpenError,
    StoreUnavailableError,
    TaskFencedError,
)
from a2a_grpc.stores.memory import MemoryTaskStore

__all__ = [
    "COMMITTED",
    "Appended",
    "AppendedEvent",
    "Claim",
    "Delivery",
    "LeaseStore",
    "MemoryTaskStore",
    "MessageTakenError",
    "PushStore",
    "Scope",
    "StoreInUseError",
    "StoreOpenError",
    "StoreUnavailableError",
    "StoredTask",
    "TaskFencedError",
    "TaskLog",
    "TaskStore",
    "open_store",
    "shown",
    "store_for",
]

DEFAULT_URL = "sqlite:///a2a-grpc.db"


def store_for(url: str, shard: int | None = None, shards: int = 0) -> TaskStore:
    """The store a URL names (not opened yet); ValueError for anything else.

    SQLite in shards (shards.py): `shard`, the one this process creates its
    tasks in (a worker's, 0-based); `shards`, how many there are to be at
    least (the supervisor of `serve --workers N` makes N). A file with no
    shards beside it, for a process with none of its own, is the plain store."""
    if url == "memory":
        return MemoryTaskStore()
    if url.startswith("sqlite:///"):
        from a2a_grpc.stores.restore import check_restored
        from a2a_grpc.stores.shard_files import shards_on_disk
        from a2a_grpc.stores.shards import ShardedSqliteStore
        from a2a_grpc.stores.sqlite import SqliteTaskStore

        path = url.removeprefix("sqlite:///")
        if not path:
            raise ValueError("sqlite:/// needs a file path, e.g. sqlite:///a2a-grpc.db")
        check_restored(Path(path))
        count = max(shards, shards_on_disk(Path(path)))
        if count == 1:
            return SqliteTaskStore(path)
        return ShardedSqliteStore(path, own=shard or 0, count=count)
    if url.startswith(("postgresql://", "postgres://")):
        try:
            from a2a_grpc.stores.postgres import PostgresTaskStore
        except ImportError as exc:
            raise missing(exc, "--store postgresql://", "postgres") from None
        return PostgresTaskStore(url)
    raise ValueError(f"unknown store {url!r}: use memory, sqlite:///PATH or postgresql://...")


def shown(url: str) -> str:
    """A store's URL fit for a log line or an error (no password)."""
    return re.sub(r"//([^:/@]+):[^@]*@", r"//\1:***@", url)


async def open_store(url: str, shard: int | None = None, shards: int = 0) -> TaskStore:
    """The store a URL names, opened (created or migrated as needed): ValueError
    for a URL that names none, StoreOpenError for one that cannot be opened."""
    store = store_for(url, shard, shards)
    try:
        await store.open()
    except (StoreInUseError, MissingExtraError):
        raise
    except Exception as exc:  # sqlite3, asyncpg, OSError: what the URL names is not there
        raise StoreOpenError(shown(url), exc) from exc
    return store
