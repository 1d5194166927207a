"""What the SQLite and PostgreSQL stores share: schema, migrations, queries.

Tasks are rows of a serialized Task plus the columns ListTasks filters and
sorts on; every filter combination has an index ending in (status time, id),
so a page is an index range scan that costs the same at 100,000 tasks as at
1,000. Total counts come from a per-(tenant, owner, state) counter kept in the
same transaction as the task, so the common "how many tasks (in this
state)?" does not scan either; other filters count over their index.

The SQL is written once with `?` placeholders; each dialect supplies its
blob type and runs statements its own way (`_run`, `_read`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from generated.a2a_pb2 import StreamResponse, Task

from ..core import states
from ..core.listing import TaskQuery
from .base import Scope, StoredTask, StoreUnavailableError
from .sql_push import SqlPushQueries

log = logging.getLogger("a2a_grpc.store")

Row = Sequence[Any]


class Tx(Protocol):
    async def execute(self, sql: str, *args: Any) -> None: ...

    async def fetch(self, sql: str, *args: Any) -> list[Row]: ...


# Each entry moves the schema up one version; never edit a released entry.
MIGRATIONS: list[list[str]] = [
    [
        """CREATE TABLE a2a_tasks (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, id TEXT NOT NULL,
            context_id TEXT NOT NULL, state INTEGER NOT NULL, status_ns BIGINT NOT NULL,
            seq BIGINT NOT NULL, body {blob} NOT NULL,
            PRIMARY KEY (tenant, id))""",
        "CREATE INDEX a2a_tasks_recent ON a2a_tasks (tenant, owner, status_ns DESC, id DESC)",
        """CREATE INDEX a2a_tasks_context
            ON a2a_tasks (tenant, owner, context_id, status_ns DESC, id DESC)""",
        """CREATE INDEX a2a_tasks_state
            ON a2a_tasks (tenant, owner, state, status_ns DESC, id DESC)""",
        "CREATE INDEX a2a_tasks_unsettled ON a2a_tasks (state)",
        """CREATE TABLE a2a_events (
            tenant TEXT NOT NULL, task_id TEXT NOT NULL, seq BIGINT NOT NULL,
            body {blob} NOT NULL, PRIMARY KEY (tenant, task_id, seq))""",
        """CREATE TABLE a2a_messages (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, message_id TEXT NOT NULL,
            task_id TEXT NOT NULL, PRIMARY KEY (tenant, owner, message_id))""",
        "CREATE INDEX a2a_messages_task ON a2a_messages (tenant, task_id)",
        """CREATE TABLE a2a_push_configs (
            tenant TEXT NOT NULL, task_id TEXT NOT NULL, id TEXT NOT NULL,
            created BIGINT NOT NULL, body {blob} NOT NULL, PRIMARY KEY (tenant, task_id, id))""",
        """CREATE TABLE a2a_counts (
            tenant TEXT NOT NULL, owner TEXT NOT NULL, state INTEGER NOT NULL,
            n BIGINT NOT NULL, PRIMARY KEY (tenant, owner, state))""",
    ],
    [  # 2: the push notification outbox
        """CREATE TABLE a2a_outbox (
            id {serial}, tenant TEXT NOT NULL, owner TEXT NOT NULL, task_id TEXT NOT NULL,
            config_id TEXT NOT NULL, seq BIGINT NOT NULL, attempts INTEGER NOT NULL,
            next_ns BIGINT NOT NULL, dead INTEGER NOT NULL, last_error TEXT NOT NULL)""",
        "CREATE INDEX a2a_outbox_due ON a2a_outbox (dead, next_ns)",
        "CREATE INDEX a2a_outbox_head ON a2a_outbox (tenant, task_id, config_id, dead, seq)",
    ],
    [  # 3: tasks an agent handed off on purpose (crash recovery leaves them be)
        "ALTER TABLE a2a_tasks ADD COLUMN handed_off INTEGER NOT NULL DEFAULT 0",
    ],
    [  # 4: what a config's notifications carry ("" the 1.0 event; "0.3"/"0.1" a task)
        "ALTER TABLE a2a_push_configs ADD COLUMN payload TEXT NOT NULL DEFAULT ''",
    ],
]
SCHEMA_VERSION = len(MIGRATIONS)

_UPSERT_TASK = """
    INSERT INTO a2a_tasks (tenant, owner, id, context_id, state, status_ns, seq, body)
    VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (tenant, id) DO UPDATE SET context_id = excluded.context_id,
        state = excluded.state, status_ns = excluded.status_ns, seq = excluded.seq,
        body = excluded.body"""
_COUNT = """
    INSERT INTO a2a_counts (tenant, owner, state, n) VALUES (?, ?, ?, ?)
    ON CONFLICT (tenant, owner, state) DO UPDATE SET n = a2a_counts.n + excluded.n"""


class SqlTaskStore(SqlPushQueries):
    """The queries; subclasses connect and run them (see sqlite.py, postgres.py)."""

    blob_type = "BLOB"
    serial_type = "INTEGER PRIMARY KEY"
    driver_errors: tuple[type[BaseException], ...] = (OSError,)

    async def _run(self, work: Callable[[Tx], Awaitable[Any]]) -> Any:
        """Run `work` in one transaction."""
        raise NotImplementedError

    async def _read(self, sql: str, *args: Any) -> list[Row]:
        raise NotImplementedError

    def _failed(self, exc: BaseException, doing: str) -> StoreUnavailableError:
        log.error("task store failed while %s: %s", doing, exc, exc_info=exc)
        return StoreUnavailableError()

    async def _migrate(self, tx: Tx) -> None:
        await tx.execute("CREATE TABLE IF NOT EXISTS a2a_schema (version INTEGER NOT NULL)")
        rows = await tx.fetch("SELECT version FROM a2a_schema")
        version = int(rows[0][0]) if rows else 0
        if version > SCHEMA_VERSION:
            raise RuntimeError(
                f"the task store has schema version {version}, newer than this a2a-grpc "
                f"understands ({SCHEMA_VERSION}): upgrade a2a-grpc or use another store")
        for number in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[number]:
                await tx.execute(statement.format(blob=self.blob_type, serial=self.serial_type))
            log.info("task store schema migrated to version %d", number + 1)
        if not rows:
            await tx.execute("INSERT INTO a2a_schema (version) VALUES (?)", SCHEMA_VERSION)
        elif version != SCHEMA_VERSION:
            await tx.execute("UPDATE a2a_schema SET version = ?", SCHEMA_VERSION)

    # -- tasks and their log --

    async def append(
        self, scope: Scope, task: Task, seq: int, event: StreamResponse,
        message_id: str | None = None, notify: bool = False, derived: bool = False,
    ) -> None:
        state = int(task.status.state)
        ns, blob = task.status.timestamp.ToNanoseconds(), task.SerializeToString()

        async def work(tx: Tx) -> None:
            old = await tx.fetch("SELECT state FROM a2a_tasks WHERE tenant = ? AND id = ?",
                                 scope.tenant, task.id)
            await tx.execute(_UPSERT_TASK, scope.tenant, scope.owner, task.id, task.context_id,
                             state, ns, seq, blob)
            await tx.execute("INSERT INTO a2a_events (tenant, task_id, seq, body) "
                             "VALUES (?, ?, ?, ?)", scope.tenant, task.id, seq,
                             event.SerializeToString())
            if message_id:
                await tx.execute("INSERT INTO a2a_messages (tenant, owner, message_id, task_id) "
                                 "VALUES (?, ?, ?, ?)", scope.tenant, scope.owner, message_id,
                                 task.id)
            if notify:  # one delivery per config the task has right now
                await tx.execute(
                    "INSERT INTO a2a_outbox (tenant, owner, task_id, config_id, seq, attempts, "
                    "next_ns, dead, last_error) SELECT ?, ?, ?, id, ?, 0, ?, 0, '' "
                    "FROM a2a_push_configs WHERE tenant = ? AND task_id = ?",
                    scope.tenant, scope.owner, task.id, seq, time.time_ns(), scope.tenant,
                    task.id)
            before = int(old[0][0]) if old else None
            if before != state:
                if before is not None:
                    await tx.execute(_COUNT, scope.tenant, scope.owner, before, -1)
                await tx.execute(_COUNT, scope.tenant, scope.owner, state, 1)

        await self._guarded(work, f"writing task {task.id}")

    async def _guarded(self, work: Callable[[Tx], Awaitable[Any]], doing: str) -> Any:
        try:
            return await self._run(work)
        except self.driver_errors as exc:
            raise self._failed(exc, doing) from exc

    async def _query(self, doing: str, sql: str, *args: Any) -> list[Row]:
        try:
            return await self._read(sql, *args)
        except self.driver_errors as exc:
            raise self._failed(exc, doing) from exc

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        rows = await self._query(f"reading task {task_id}",
                                 "SELECT body, seq FROM a2a_tasks WHERE tenant = ? AND id = ? "
                                 "AND owner = ?", scope.tenant, task_id, scope.owner)
        return StoredTask(Task.FromString(bytes(rows[0][0])), int(rows[0][1])) if rows else None

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        rows = await self._query(
            f"reading events of task {task_id}",
            "SELECT seq, body FROM a2a_events WHERE tenant = ? AND task_id = ? AND seq > ? "
            "AND seq <= ? ORDER BY seq", scope.tenant, task_id, after, upto)
        return [(int(r[0]), StreamResponse.FromString(bytes(r[1]))) for r in rows]

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        where: list[str] = ["tenant = ?", "owner = ?"]
        args: list[Any] = [query.tenant, query.owner]
        if query.context_id:
            where.append("context_id = ?")
            args.append(query.context_id)
        if query.status:
            where.append("state = ?")
            args.append(int(query.status))
        if query.after_ns is not None:
            where.append("status_ns >= ?")
            args.append(query.after_ns)
        page_where, page_args = list(where), list(args)
        if query.cursor is not None:  # strictly after the cursor, newest first
            # A row-value comparison, so both databases turn it into an index range.
            page_where.append("(status_ns, id) < (?, ?)")
            page_args += [query.cursor[0], query.cursor[1]]
        rows = await self._query(
            "listing tasks",
            f"SELECT body FROM a2a_tasks WHERE {' AND '.join(page_where)} "
            "ORDER BY status_ns DESC, id DESC LIMIT ?", *page_args, query.page_size)
        return [Task.FromString(bytes(r[0])) for r in rows], await self._total(query, where, args)

    async def _total(self, query: TaskQuery, where: list[str], args: list[Any]) -> int:
        if not query.context_id and query.after_ns is None:
            counted = ["tenant = ?", "owner = ?"] + (["state = ?"] if query.status else [])
            rows = await self._query("counting tasks",
                                     f"SELECT SUM(n) FROM a2a_counts WHERE {' AND '.join(counted)}",
                                     *args[: len(counted)])
        else:
            rows = await self._query("counting tasks",
                                     f"SELECT COUNT(*) FROM a2a_tasks WHERE {' AND '.join(where)}",
                                     *args)
        return int(rows[0][0] or 0) if rows else 0

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        rows = await self._query(f"looking up task {task_id}",
                                 "SELECT 1 FROM a2a_tasks WHERE tenant = ? AND id = ?",
                                 tenant, task_id)
        return bool(rows)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        rows = await self._query("reading message ids",
                                 "SELECT task_id FROM a2a_messages WHERE tenant = ? AND owner = ? "
                                 "AND message_id = ?", scope.tenant, scope.owner, message_id)
        return str(rows[0][0]) if rows else None

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        async def work(tx: Tx) -> None:
            await tx.execute("UPDATE a2a_tasks SET handed_off = ? WHERE tenant = ? AND id = ?",
                             int(handed_off), scope.tenant, task_id)

        await self._guarded(work, f"marking task {task_id}")

    async def unsettled(self) -> list[tuple[Scope, StoredTask]]:
        rows = await self._query("finding running tasks",
                                 "SELECT tenant, owner, body, seq FROM a2a_tasks "
                                 "WHERE state IN (?, ?) AND handed_off = 0",
                                 int(states.SUBMITTED), int(states.WORKING))
        return [(Scope(r[0], r[1]), StoredTask(Task.FromString(bytes(r[2])), int(r[3])))
                for r in rows]

    async def purge(self, before_ns: int) -> int:
        final = sorted(int(s) for s in states.TERMINAL)
        marks = ", ".join("?" for _ in final)

        async def work(tx: Tx) -> int:
            rows = await tx.fetch(f"SELECT tenant, owner, id, state FROM a2a_tasks WHERE state IN "
                                  f"({marks}) AND status_ns < ? LIMIT 1000", *final, before_ns)
            for tenant, owner, task_id, state in rows:
                for table, column in (("a2a_tasks", "id"), ("a2a_events", "task_id"),
                                      ("a2a_messages", "task_id"),
                                      ("a2a_push_configs", "task_id"),
                                      ("a2a_outbox", "task_id")):
                    await tx.execute(f"DELETE FROM {table} WHERE tenant = ? AND {column} = ?",
                                     tenant, task_id)
                await tx.execute(_COUNT, tenant, owner, int(state), -1)
            return len(rows)

        total = 0
        while (gone := await self._guarded(work, "purging old tasks")) > 0:
            total += gone
        return total
