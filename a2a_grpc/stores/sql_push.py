"""The push notification part of the SQL stores: configs and the outbox of
deliveries (queued by `SqlTaskStore.append` in the event's transaction).
`SqlPush` is held by the store, which gives it how statements run."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from a2a_grpc.generated.a2a_pb2 import TaskPushNotificationConfig
from a2a_grpc.stores.base import Delivery, Scope
from a2a_grpc.stores.sql_batch import Row, Tx

# How the store runs statements: a unit of work in one transaction (`doing`
# names it in errors), and a read.
Write = Callable[[Callable[[Tx], Awaitable[Any]], str], Awaitable[Any]]
Read = Callable[..., Awaitable[list[Row]]]  # (doing, sql, *args)


class SqlPush:
    """Push configs and the outbox, in the store's database."""

    def __init__(self, write: Write, read: Read, dialect: str) -> None:
        self._guarded, self._query, self.dialect = write, read, dialect

    # -- push notification configs --

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        async def work(tx: Tx) -> None:
            await tx.execute(
                "INSERT INTO a2a_push_configs (tenant, task_id, id, created, body, payload) "
                "VALUES (?, ?, ?, (SELECT COALESCE(MAX(created), 0) + 1 FROM a2a_push_configs), "
                "?, ?) ON CONFLICT (tenant, task_id, id) DO UPDATE SET body = excluded.body, "
                "payload = excluded.payload",
                scope.tenant, config.task_id, config.id, config.SerializeToString(), payload)

        await self._guarded(work, "saving a push config")

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        target = await self.get_push_target(scope, task_id, config_id)
        return None if target is None else target[0]

    async def get_push_target(
        self, scope: Scope, task_id: str, config_id: str
    ) -> tuple[TaskPushNotificationConfig, str] | None:
        rows = await self._query("reading a push config",
                                 "SELECT body, payload FROM a2a_push_configs WHERE tenant = ? "
                                 "AND task_id = ? AND id = ?", scope.tenant, task_id, config_id)
        if not rows:
            return None
        return TaskPushNotificationConfig.FromString(bytes(rows[0][0])), str(rows[0][1])

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        rows = await self._query("listing push configs",
                                 "SELECT body FROM a2a_push_configs WHERE tenant = ? AND "
                                 "task_id = ? ORDER BY created", scope.tenant, task_id)
        return [TaskPushNotificationConfig.FromString(bytes(r[0])) for r in rows]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        async def work(tx: Tx) -> None:
            await tx.execute("DELETE FROM a2a_push_configs WHERE tenant = ? AND task_id = ? "
                             "AND id = ?", scope.tenant, task_id, config_id)
            await tx.execute("DELETE FROM a2a_outbox WHERE tenant = ? AND task_id = ? "
                             "AND config_id = ? AND dead = 0", scope.tenant, task_id, config_id)

        await self._guarded(work, "deleting a push config")

    # -- the push outbox --

    async def due_deliveries(self, now_ns: int, limit: int,
                             claim_until_ns: int | None = None) -> list[Delivery]:
        due = ("SELECT {} FROM a2a_outbox o WHERE dead = 0 AND next_ns <= ? "
               "AND NOT EXISTS (SELECT 1 FROM a2a_outbox p WHERE p.tenant = o.tenant AND "
               "p.task_id = o.task_id AND p.config_id = o.config_id AND p.dead = 0 AND "
               "p.seq < o.seq) ORDER BY next_ns, id LIMIT ?")
        if claim_until_ns is None:
            rows = await self._query("reading the push outbox", due.format(_DELIVERY),
                                     now_ns, limit)
            return [_delivery(r) for r in rows]
        # One statement: SQLite runs one writer at a time; PostgreSQL skips the
        # rows another replica is claiming in the same moment.
        locked = " FOR UPDATE SKIP LOCKED" if self.dialect == "postgres" else ""

        async def claim(tx: Tx) -> list[Row]:
            return await tx.fetch(
                f"UPDATE a2a_outbox SET next_ns = ? WHERE id IN ({due.format('o.id')}{locked}) "
                f"RETURNING {_DELIVERY}", claim_until_ns, now_ns, limit)

        rows = await self._guarded(claim, "claiming push deliveries")
        return sorted((_delivery(r) for r in rows), key=lambda d: d.id)

    async def next_due(self) -> int | None:
        rows = await self._query("reading the push outbox",
                                 "SELECT MIN(next_ns) FROM a2a_outbox WHERE dead = 0")
        return int(rows[0][0]) if rows and rows[0][0] is not None else None

    async def delivered(self, delivery_id: int) -> None:
        await self._write("recording a delivery", "DELETE FROM a2a_outbox WHERE id = ?",
                          delivery_id)

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        await self._write("rescheduling a delivery", "UPDATE a2a_outbox SET attempts = ?, "
                          "next_ns = ?, last_error = ? WHERE id = ?", attempts, next_ns,
                          error[:500], delivery_id)

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        await self._write("dead-lettering a delivery", "UPDATE a2a_outbox SET attempts = ?, "
                          "dead = 1, last_error = ? WHERE id = ?", attempts, error[:500],
                          delivery_id)

    async def dead_letters(self, limit: int = 100) -> list[Delivery]:
        rows = await self._query("reading dead letters",
                                 f"SELECT {_DELIVERY} FROM a2a_outbox WHERE dead = 1 "
                                 "ORDER BY id LIMIT ?", limit)
        return [_delivery(r) for r in rows]

    async def _write(self, doing: str, sql: str, *args: Any) -> None:
        async def work(tx: Tx) -> None:
            await tx.execute(sql, *args)

        await self._guarded(work, doing)


_DELIVERY = "id, tenant, owner, task_id, config_id, seq, attempts, last_error"


def _delivery(r: Row) -> Delivery:
    return Delivery(int(r[0]), Scope(r[1], r[2]), r[3], r[4], int(r[5]), int(r[6]), r[7])
