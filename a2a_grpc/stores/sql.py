"""What the SQLite and PostgreSQL stores share: writes, reads, queries.

Tasks are rows of the columns ListTasks filters and sorts on; the reads
are in sql_reads.py, push configs and the outbox in sql_push.py.

Writes (writes.py): an event is a row of its own, and the task's snapshot is
rewritten now and then (`SnapshotPolicy`); a read folds the events logged
after the snapshot into it. Appends are group-committed (`GroupCommit`,
sql_batch.py). A final task's snapshot is always current.

The SQL is written once with `?` placeholders; each dialect supplies its
blob type and runs statements its own way (`_run`, `_read`, `_states_of`).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from typing import Any

from a2a_grpc.core import states
from a2a_grpc.core.ids import sorted_id
from a2a_grpc.core.listing import TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig
from a2a_grpc.stores.base import Appended, AppendedEvent, Claim, Delivery, Scope, StoredTask
from a2a_grpc.stores.errors import MessageTakenError, StoreUnavailableError
from a2a_grpc.stores.fence import Fence, refusal
from a2a_grpc.stores.sql_batch import COUNT, Row, Tx, write_batch
from a2a_grpc.stores.sql_leases import renewal
from a2a_grpc.stores.sql_push import SqlPush
from a2a_grpc.stores.sql_reads import EXPIRED, RUNNING, SqlReads
from a2a_grpc.stores.sql_schema import migrate
from a2a_grpc.stores.writes import (
    GroupCommit,
    Refused,
    Rider,
    SnapshotPolicy,
    Timings,
    Write,
    timed,
    write_of,
)

log = logging.getLogger("a2a_grpc.store")

__all__ = ["Row", "SqlTaskStore", "Tx"]
_STATES_CHUNK = 32  # tasks per state lookup: one statement shape, padded


class SqlTaskStore:
    """The queries; subclasses connect and run them (see sqlite.py, postgres.py)."""

    dialect = "sqlite"
    blob_type = "BLOB"
    serial_type = "INTEGER PRIMARY KEY"
    driver_errors: tuple[type[BaseException], ...] = (OSError,)
    _policy: SnapshotPolicy
    _group: GroupCommit

    lease: tuple[str, int] = ("", 0)  # (holder, ns): what a write records (see `hold`)
    timings: Timings | None = None
    _queued = False  # a commit queued push deliveries (take_queued)

    new_task_id = staticmethod(sorted_id)

    async def ping(self) -> bool:
        return bool(await self._read("SELECT 1"))

    def take_queued(self) -> bool:
        queued, self._queued = self._queued, False
        return queued

    async def count_states(self) -> dict[int, int]:
        rows = await self._query("counting tasks", "SELECT state, COUNT(*) FROM a2a_tasks "
                                 "GROUP BY state")
        return {int(r[0]): int(r[1]) for r in rows}

    def hold(self, holder: str, seconds: float) -> None:
        """Record `holder` as the runner of each task this store writes, for
        `seconds` from each write (replicas: see `unsettled`, `renew`)."""
        self.lease = (holder, int(seconds * 1e9))

    def _init_writes(self, snapshot_bytes: int) -> None:
        self._push = SqlPush(self._guarded, self._query, self.dialect)
        self._reads = SqlReads(self._query)
        self._policy = SnapshotPolicy(snapshot_bytes)
        self._group = GroupCommit(
            lambda batch, riders: timed(self.timings, "commit", self._commit_batch(batch, riders)),
            self._failed_write, self.driver_errors)

    async def _run(self, work: Callable[[Tx], Awaitable[Any]]) -> Any:
        """Run `work` in one transaction."""
        raise NotImplementedError

    async def _read(self, sql: str, *args: Any) -> list[Row]:
        raise NotImplementedError

    async def _commit_batch(self, batch: list[Write], riders: list[Rider]) -> Refused:
        """One transaction for `batch` (riders: the SQLite store's; none here)."""
        if not batch:
            return []
        queued, refused = await self._run(
            lambda tx: write_batch(tx, batch, self._fences_of, self.lease))
        self._queued = self._queued or queued
        return refused  # type: ignore[no-any-return]

    async def _fences_of(self, tx: Tx, keys: list[tuple[str, str]]
                         ) -> dict[tuple[str, str], Fence]:
        """What the fence reads (sql_batch.Fences). SQLite runs one writer at a
        time (BEGIN IMMEDIATE): what is read here stays so until the commit."""
        found: dict[tuple[str, str], Fence] = {}
        marks = ", ".join(["(?, ?)"] * _STATES_CHUNK)
        for at in range(0, len(keys), _STATES_CHUNK):
            chunk = keys[at:at + _STATES_CHUNK]
            chunk += [chunk[-1]] * (_STATES_CHUNK - len(chunk))
            # DISTINCT: the padding repeats a key, and each row left would read
            # its task's last sequence number again.
            rows = await tx.fetch(
                "SELECT t.tenant, t.id, t.state, t.epoch, (SELECT MAX(e.seq) FROM a2a_events e "
                "WHERE e.tenant = t.tenant AND e.task_id = t.id) FROM (SELECT DISTINCT column1, "
                f"column2 FROM (VALUES {marks})) AS k "
                "JOIN a2a_tasks t ON t.tenant = k.column1 AND t.id = k.column2",
                *(v for key in chunk for v in key))
            found.update(((r[0], r[1]), Fence(int(r[4] or 0), int(r[2]), int(r[3])))
                         for r in rows)
        return found

    def _failed_write(self, exc: BaseException, write: Write) -> StoreUnavailableError:
        """What a writer is told when its write failed (GroupCommit's `fail`)."""
        text = str(exc)
        if "a2a_tasks" in text and "unique" in text.lower():  # INSERT_TASK: made already
            return refusal(write.task_id, 1, write.epoch, Fence(1, 0, write.epoch)) or \
                StoreUnavailableError()
        return self._failed(exc, f"writing task {write.task_id}")

    def _failed(self, exc: BaseException, doing: str) -> StoreUnavailableError:
        if "a2a_messages" in str(exc) and "unique" in str(exc).lower():
            log.info("while %s: its messageId was recorded by another server first", doing)
            return MessageTakenError()
        log.error("task store failed while %s: %s", doing, exc, exc_info=exc)
        return StoreUnavailableError()

    async def _migrate(self, tx: Tx) -> None:
        await migrate(tx, self.dialect, self.blob_type, self.serial_type)

    # -- tasks and their log --

    def append(
        self, scope: Scope, task: Task, seq: int, event: StreamResponse,
        message_id: str | None = None, notify: bool = False, derived: bool = False,
        epoch: int = 0,
    ) -> Awaitable[None]:
        return self.append_many(scope, task, (AppendedEvent(seq, event, message_id, derived),),
                                notify, epoch)

    def append_many(
        self, scope: Scope, task: Task, events: Sequence[Appended], notify: bool = False,
        epoch: int = 0,
    ) -> Awaitable[None]:
        return self._group.submit(write_of(scope, task, events, notify, epoch, self._policy))

    @property
    def commits(self) -> tuple[int, int]:
        """(transactions, appends) committed so far: their ratio is the grouping."""
        return self._group.transactions, self._group.writes

    async def _drain_writes(self) -> None:
        """Before closing: wait for every write made so far."""
        await self._group.drain()

    async def _guarded(self, work: Callable[[Tx], Awaitable[Any]], doing: str) -> Any:
        try:
            return await timed(self.timings, "write", self._run(work))
        except self.driver_errors as exc:
            raise self._failed(exc, doing) from exc

    async def _query(self, doing: str, sql: str, *args: Any) -> list[Row]:
        try:
            return await timed(self.timings, "read", self._read(sql, *args))
        except self.driver_errors as exc:
            raise self._failed(exc, doing) from exc

    # -- reads (sql_reads.py) --

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        return await self._reads.get(scope, task_id)

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        return await self._reads.events(scope, task_id, after, upto)

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        return await self._reads.list_tasks(query)

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        return await self._reads.task_id_taken(tenant, task_id)

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        return await self._reads.task_for_message(scope, message_id)

    async def handed_off(self, scope: Scope, task_id: str) -> bool:
        return await self._reads.handed_off(scope, task_id)

    async def context_state(self, scope: Scope, context_id: str, name: str) -> bytes | None:
        return await self._reads.context_state(scope, context_id, name)

    async def save_context_state(self, scope: Scope, context_id: str, name: str,
                                 body: bytes) -> None:
        async def work(tx: Tx) -> None:
            await tx.execute("INSERT INTO a2a_contexts (tenant, owner, context_id, name, body) "
                             "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant, owner, context_id, "
                             "name) DO UPDATE SET body = excluded.body", scope.tenant,
                             scope.owner, context_id, name, body)

        await self._guarded(work, f"saving conversation {context_id}")

    async def card_published(self, name: str, digest: str, now_ns: int) -> int:
        async def work(tx: Tx) -> int:
            # A replica that finds the digest already there keeps its time; a new
            # digest replaces the old one once, whichever replica writes first.
            await tx.execute("UPDATE a2a_cards SET digest = ?, since_ns = ? "
                             "WHERE name = ? AND digest <> ?", digest, now_ns, name, digest)
            await tx.execute("INSERT INTO a2a_cards (name, digest, since_ns) VALUES (?, ?, ?) "
                             "ON CONFLICT (name) DO NOTHING", name, digest, now_ns)
            rows = await tx.fetch("SELECT since_ns FROM a2a_cards WHERE name = ?", name)
            return int(rows[0][0])

        since: int = await self._guarded(work, "recording the card")
        return since

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        async def work(tx: Tx) -> None:
            await tx.execute("UPDATE a2a_tasks SET handed_off = ? WHERE tenant = ? AND id = ?",
                             int(handed_off), scope.tenant, task_id)

        await self._guarded(work, f"marking task {task_id}")

    async def unsettled(self, claim: Claim | None = None) -> list[tuple[Scope, StoredTask]]:
        if claim is None:
            return await self._reads.running()

        async def take(tx: Tx) -> list[Row]:  # one statement: no task claimed twice
            return await tx.fetch(
                "UPDATE a2a_tasks SET holder = ?, lease_ns = ?, epoch = epoch + 1 "
                f"WHERE {EXPIRED} "
                "RETURNING tenant, owner, id",
                claim.holder, claim.until_ns, *RUNNING, claim.now_ns, claim.holder)

        taken = await self._guarded(take, "claiming the tasks of stopped replicas")
        found = [(Scope(r[0], r[1]), await self.get(Scope(r[0], r[1]), r[2])) for r in taken]
        return [(scope, task) for scope, task in found if task is not None]

    async def renew(self, holder: str, until_ns: int,
                    running: Collection[str] | None = None) -> None:
        await self._guarded(renewal(holder, until_ns, running), "renewing leases")

    async def purge(self, before_ns: int) -> int:
        final = sorted(int(s) for s in states.TERMINAL)
        marks = ", ".join("?" for _ in final)

        async def work(tx: Tx) -> int:
            rows = await tx.fetch(f"SELECT tenant, owner, id, state FROM a2a_tasks WHERE state IN "
                                  f"({marks}) AND status_ns < ? LIMIT 1000", *final, before_ns)
            for tenant, owner, task_id, state in rows:
                for table, column in (("a2a_tasks", "id"), ("a2a_snapshots", "task_id"),
                                      ("a2a_events", "task_id"),
                                      ("a2a_messages", "task_id"),
                                      ("a2a_push_configs", "task_id"),
                                      ("a2a_outbox", "task_id")):
                    await tx.execute(f"DELETE FROM {table} WHERE tenant = ? AND {column} = ?",
                                     tenant, task_id)
                await tx.execute(COUNT, tenant, owner, int(state), -1)
            return len(rows)

        total = 0
        while (gone := await self._guarded(work, "purging old tasks")) > 0:
            total += gone
        return total

    # -- push configs and the outbox (sql_push.py) --

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        await self._push.save_push_config(scope, config, payload)

    async def get_push_config(self, scope: Scope, task_id: str,
                              config_id: str) -> TaskPushNotificationConfig | None:
        return await self._push.get_push_config(scope, task_id, config_id)

    async def get_push_target(self, scope: Scope, task_id: str, config_id: str
                              ) -> tuple[TaskPushNotificationConfig, str] | None:
        return await self._push.get_push_target(scope, task_id, config_id)

    async def list_push_configs(self, scope: Scope,
                                task_id: str) -> list[TaskPushNotificationConfig]:
        return await self._push.list_push_configs(scope, task_id)

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        await self._push.delete_push_config(scope, task_id, config_id)

    async def due_deliveries(self, now_ns: int, limit: int,
                             claim_until_ns: int | None = None) -> list[Delivery]:
        return await self._push.due_deliveries(now_ns, limit, claim_until_ns)

    async def next_due(self) -> int | None:
        return await self._push.next_due()

    async def delivered(self, delivery_id: int) -> None:
        await self._push.delivered(delivery_id)

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        await self._push.reschedule(delivery_id, attempts, next_ns, error)

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        await self._push.dead_letter(delivery_id, attempts, error)

    async def dead_letters(self, limit: int = 100) -> list[Delivery]:
        return await self._push.dead_letters(limit)
