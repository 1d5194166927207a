"""In-memory task store: for tests and throwaway demos (`--store memory`).

Tasks and events are kept as serialized bytes, so nothing a caller holds can
alias what is stored (rows: memory_rows.py). Listing sorts the scope's tasks
on each call: fine for thousands of tasks; the SQL stores serve large volumes
from an index. The messageId index shares the task id strings of the task
table.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field

from a2a_grpc.core import listing, states
from a2a_grpc.core.ids import nanos_of
from a2a_grpc.core.listing import SortKey, TaskQuery
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task, TaskPushNotificationConfig
from a2a_grpc.stores.base import (
    COMMITTED,
    Appended,
    AppendedEvent,
    Claim,
    Delivery,
    Scope,
    StoredTask,
)
from a2a_grpc.stores.fence import fenced
from a2a_grpc.stores.memory_rows import FRAME, TERMINAL, Live, View, head, packed_task


@dataclass(slots=True)
class MemoryTaskStore:
    _tasks: dict[Scope, dict[str, Live | bytes]] = field(default_factory=dict)
    # per (scope, task): config id -> (the config, its payload)
    _push: dict[tuple[Scope, str], dict[str, tuple[bytes, str]]] = field(default_factory=dict)
    _messages: dict[Scope, dict[str, str]] = field(default_factory=dict)
    _outbox: dict[int, _Entry] = field(default_factory=dict)
    _handed_off: set[tuple[Scope, str]] = field(default_factory=set)
    _contexts: dict[tuple[Scope, str, str], bytes] = field(default_factory=dict)
    _cards: dict[str, tuple[str, int]] = field(default_factory=dict)  # name -> (digest, since)
    timings: Callable[[str, float], None] | None = None  # nothing to time in memory
    _queued: bool = False
    _next_id: int = 1

    async def open(self) -> None:
        pass

    async def close(self) -> None:
        pass

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
        tasks = self._tasks.get(scope)
        if tasks is None:
            tasks = self._tasks[scope] = {}
        task_id, status = task.id, task.status
        old = tasks.get(task_id)
        first = events[0].seq
        if first > 1 or old is not None:  # one process: no takeover, so no epoch to check
            fenced(task_id, first, None if old is None else head(old))
        frames = bytearray()
        derived = True
        for appended in events:
            body = appended.event.SerializeToString()
            frames += FRAME.pack(appended.seq, len(body))
            frames += body
            derived = derived and appended.derived
        last = events[-1].seq
        state = status.state
        if derived and isinstance(old, Live) and state not in TERMINAL:
            # A streamed task grows with every chunk: log the events alone, and
            # fold them into the task when the task is read (or turns final).
            old.log += frames
            old.seq, old.ns, old.state = last, nanos_of(status.timestamp), state
        else:
            assert not isinstance(old, bytes)  # final: fenced above
            row = Live(task.SerializeToString(), last, nanos_of(status.timestamp),
                       task.context_id, state, old.log if old is not None else bytearray())
            row.log += frames
            row.folded = len(row.log)
            # An existing key keeps its string object; a new task's id string is
            # shared by the message index below.
            tasks[task_id] = row.packed(task_id) if state in TERMINAL else row
        for appended in events:
            if appended.message_id:
                self._messages.setdefault(scope, {})[appended.message_id] = task_id
        if notify:
            for config_id in self._push.get((scope, task_id), {}):
                for appended in events:
                    self._outbox[self._next_id] = _Entry(
                        Delivery(self._next_id, scope, task_id, config_id, appended.seq, 0, ""),
                        time.time_ns())
                    self._next_id += 1
                    self._queued = True
        return COMMITTED

    async def get(self, scope: Scope, task_id: str) -> StoredTask | None:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return None
        if isinstance(row, Live):
            return StoredTask(Task.FromString(row.current()), row.seq)
        return packed_task(row, task_id)

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        row = self._tasks.get(scope, {}).get(task_id)
        if row is None:
            return []
        return [(s, StreamResponse.FromString(b)) for s, b in View(row).events(task_id)
                if after < s <= upto]

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        rows = self._tasks.get(Scope(query.tenant, query.owner), {})
        hits: list[tuple[SortKey, View]] = []
        for task_id, row in rows.items():
            ns, _, state = head(row)
            if ((query.status and state != query.status)
                    or (query.after_ns is not None and ns < query.after_ns)):
                continue
            view = View(row)
            if query.context_id and view.context_id != query.context_id:
                continue
            hits.append(((ns, task_id), view))
        hits.sort(key=lambda hit: hit[0], reverse=True)
        page = [(key, view) for key, view in hits if listing.after_cursor(query, key)]
        return [view.task(key[1]) for key, view in page[: query.page_size]], len(hits)

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        return any(task_id in rows for scope, rows in self._tasks.items()
                   if scope.tenant == tenant)

    async def task_for_message(self, scope: Scope, message_id: str) -> str | None:
        return self._messages.get(scope, {}).get(message_id)

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        if handed_off and task_id in self._tasks.get(scope, {}):
            self._handed_off.add((scope, task_id))
        else:
            self._handed_off.discard((scope, task_id))

    async def handed_off(self, scope: Scope, task_id: str) -> bool:
        return (scope, task_id) in self._handed_off

    async def context_state(self, scope: Scope, context_id: str, name: str) -> bytes | None:
        return self._contexts.get((scope, context_id, name))

    async def save_context_state(self, scope: Scope, context_id: str, name: str,
                                 body: bytes) -> None:
        self._contexts[(scope, context_id, name)] = bytes(body)

    async def ping(self) -> bool:
        return True

    def take_queued(self) -> bool:
        queued, self._queued = self._queued, False
        return queued

    async def count_states(self) -> dict[int, int]:
        counts: Counter[int] = Counter()
        for rows in self._tasks.values():
            counts.update(head(row)[2] for row in rows.values())
        return dict(counts)

    def hold(self, holder: str, seconds: float) -> None:
        return None  # one process: nobody else to take a task over

    async def renew(self, holder: str, until_ns: int,
                    running: Collection[str] | None = None) -> None:
        return None

    async def unsettled(self, claim: Claim | None = None) -> list[tuple[Scope, StoredTask]]:
        found: list[tuple[Scope, StoredTask]] = []
        for scope, rows in self._tasks.items():
            for task_id, row in rows.items():
                if (head(row)[2] in (states.SUBMITTED, states.WORKING)
                        and (scope, task_id) not in self._handed_off):
                    view = View(row)
                    found.append((scope, StoredTask(view.task(task_id), view.seq)))
        return found

    async def card_published(self, name: str, digest: str, now_ns: int) -> int:
        known = self._cards.get(name)
        if known is None or known[0] != digest:
            known = self._cards[name] = (digest, now_ns)
        return known[1]

    async def purge(self, before_ns: int) -> int:
        gone = 0
        for scope, rows in self._tasks.items():
            for task_id in [i for i, r in rows.items()
                            if head(r)[2] in TERMINAL and head(r)[0] < before_ns]:
                del rows[task_id]
                self._push.pop((scope, task_id), None)
                self._handed_off.discard((scope, task_id))
                gone += 1
        self._outbox = {k: e for k, e in self._outbox.items()
                        if e.delivery.task_id in self._tasks.get(e.delivery.scope, {})}
        for scope, index in self._messages.items():
            rows = self._tasks.get(scope, {})
            self._messages[scope] = {m: t for m, t in index.items() if t in rows}
        return gone

    async def save_push_config(self, scope: Scope, config: TaskPushNotificationConfig,
                               payload: str = "") -> None:
        self._push.setdefault((scope, config.task_id), {})[config.id] = (
            config.SerializeToString(), payload)

    async def get_push_config(
        self, scope: Scope, task_id: str, config_id: str
    ) -> TaskPushNotificationConfig | None:
        target = await self.get_push_target(scope, task_id, config_id)
        return None if target is None else target[0]

    async def get_push_target(
        self, scope: Scope, task_id: str, config_id: str
    ) -> tuple[TaskPushNotificationConfig, str] | None:
        saved = self._push.get((scope, task_id), {}).get(config_id)
        return None if saved is None else (TaskPushNotificationConfig.FromString(saved[0]),
                                           saved[1])

    async def list_push_configs(
        self, scope: Scope, task_id: str
    ) -> list[TaskPushNotificationConfig]:
        configs = self._push.get((scope, task_id), {}).values()
        return [TaskPushNotificationConfig.FromString(blob) for blob, _ in configs]

    async def delete_push_config(self, scope: Scope, task_id: str, config_id: str) -> None:
        self._push.get((scope, task_id), {}).pop(config_id, None)
        for key, e in list(self._outbox.items()):
            d = e.delivery
            if not e.dead and (d.scope, d.task_id, d.config_id) == (scope, task_id, config_id):
                del self._outbox[key]

    async def due_deliveries(self, now_ns: int, limit: int,
                             claim_until_ns: int | None = None) -> list[Delivery]:
        heads: dict[tuple[Scope, str, str], _Entry] = {}
        for e in self._outbox.values():
            d = e.delivery
            key = (d.scope, d.task_id, d.config_id)
            if not e.dead and (key not in heads or d.seq < heads[key].delivery.seq):
                heads[key] = e
        due = sorted((e.next_ns, e.delivery.id) for e in heads.values() if e.next_ns <= now_ns)
        taken = [self._outbox[i] for _, i in due[:limit]]
        if claim_until_ns is not None:
            for e in taken:
                e.next_ns = claim_until_ns
        return [e.delivery for e in taken]

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
