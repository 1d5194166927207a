"""In-memory task store: for tests and throwaway demos (`--store memory`).

Tasks and events are kept as serialized bytes, so nothing a caller holds can
alias what is stored. Listing sorts the scope's tasks on each call: fine for
thousands of tasks; the SQL stores serve large volumes from an index.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig

from ..core import listing, states
from ..core.listing import SortKey, TaskQuery
from .base import Delivery, Scope, StoredTask


@dataclass(slots=True)
class _Row:
    blob: bytes
    seq: int
    key: SortKey
    context_id: str
    state: int
    log: list[tuple[int, bytes]] = field(default_factory=list)


@dataclass(slots=True)
class MemoryTaskStore:
    _tasks: dict[Scope, dict[str, _Row]] = field(default_factory=dict)
    _push: dict[tuple[Scope, str], dict[str, bytes]] = field(default_factory=dict)
    _messages: dict[tuple[Scope, str], str] = field(default_factory=dict)
    _outbox: dict[int, _Entry] = field(default_factory=dict)
    _next_id: int = 1

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

    async def append(
        self, scope: Scope, task: Task, seq: int, event: StreamResponse,
        message_id: str | None = None, notify: bool = False,
    ) -> None:
        tasks = self._tasks.setdefault(scope, {})
        old = tasks.get(task.id)
        log = old.log if old is not None else []
        log.append((seq, event.SerializeToString()))
        tasks[task.id] = _Row(task.SerializeToString(), seq, listing.sort_key(task),
                              task.context_id, task.status.state, log)
        if message_id:
            self._messages[(scope, message_id)] = task.id
        if notify:
            for config_id in self._push.get((scope, task.id), {}):
                self._outbox[self._next_id] = _Entry(
                    Delivery(self._next_id, scope, task.id, config_id, seq, 0, ""),
                    time.time_ns())
                self._next_id += 1

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return None
        return StoredTask(Task.FromString(row.blob), row.seq)

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return []
        return [(s, StreamResponse.FromString(b)) for s, b in row.log if after < s <= upto]

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        rows = self._tasks.get(Scope(query.tenant, query.owner), {}).values()
        hits = [r for r in rows if _matches(query, r)]
        hits.sort(key=lambda r: r.key, reverse=True)
        after = [r for r in hits if listing.after_cursor(query, r.key)]
        return [Task.FromString(r.blob) for r in after[: query.page_size]], len(hits)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        return self._messages.get((scope, message_id))

    async def unsettled(self) -> list[tuple[Scope, StoredTask]]:
        return [(scope, StoredTask(Task.FromString(r.blob), r.seq))
                for scope, rows in self._tasks.items() for r in rows.values()
                if r.state in (states.SUBMITTED, states.WORKING)]

    async def purge(self, before_ns: int) -> int:
        gone = 0
        for scope, rows in self._tasks.items():
            for task_id in [i for i, r in rows.items()
                            if r.state in states.TERMINAL and r.key[0] < before_ns]:
                del rows[task_id]
                self._push.pop((scope, task_id), None)
                gone += 1
        alive = {(scope, t) for scope, rows in self._tasks.items() for t in rows}
        self._outbox = {k: e for k, e in self._outbox.items()
                        if (e.delivery.scope, e.delivery.task_id) in alive}
        self._messages = {k: v for k, v in self._messages.items() if (k[0], v) in alive}
        return gone

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig) -> None:
        self._push.setdefault((scope, config.task_id), {})[config.id] = config.SerializeToString()

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        blob = self._push.get((scope, task_id), {}).get(config_id)
        return None if blob is None else TaskPushNotificationConfig.FromString(blob)

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        configs = self._push.get((scope, task_id), {}).values()
        return [TaskPushNotificationConfig.FromString(b) for b in configs]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._push.get((scope, task_id), {}).pop(config_id, None)
        for key, e in list(self._outbox.items()):
            d = e.delivery
            if not e.dead and (d.scope, d.task_id, d.config_id) == (scope, task_id, config_id):
                del self._outbox[key]

    async def due_deliveries(self, now_ns: int, limit: int) -> list[Delivery]:
        heads: dict[tuple[Scope, str, str], _Entry] = {}
        for e in self._outbox.values():
            d = e.delivery
            key = (d.scope, d.task_id, d.config_id)
            if not e.dead and (key not in heads or d.seq < heads[key].delivery.seq):
                heads[key] = e
        due = sorted((e.next_ns, e.delivery.id) for e in heads.values() if e.next_ns <= now_ns)
        return [self._outbox[i].delivery for _, i in due[:limit]]

    async def next_due(self) -> int | None:
        return min((e.next_ns for e in self._outbox.values() if not e.dead), default=None)

    async def delivered(self, delivery_id: int) -> None:
        self._outbox.pop(delivery_id, None)

    async def reschedule(self, delivery_id: int, attempts: int, next_ns: int, error: str) -> None:
        e = self._outbox.get(delivery_id)
        if e is not None:
            e.delivery = e.delivery._replace(attempts=attempts, last_error=error)
            e.next_ns = next_ns

    async def dead_letter(self, delivery_id: int, attempts: int, error: str) -> None:
        e = self._outbox.get(delivery_id)
        if e is not None:
            e.delivery = e.delivery._replace(attempts=attempts, last_error=error)
            e.dead = True

    async def dead_letters(self, limit: int = 100) -> list[Delivery]:
        return [e.delivery for e in sorted(self._outbox.values(), key=lambda e: e.delivery.id)
                if e.dead][:limit]


@dataclass(slots=True)
class _Entry:
    delivery: Delivery
    next_ns: int
    dead: bool = False


def _matches(query: TaskQuery, row: _Row) -> bool:
    if query.context_id and row.context_id != query.context_id:
        return False
    if query.status and row.state != query.status:
        return False
    return query.after_ns is None or row.key[0] >= query.after_ns
