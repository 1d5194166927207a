"""In-memory task store: for tests and throwaway demos (`--store memory`).

The store contract (stores/base.py) kept in plain structures: everything but
the tasks here, the tasks in a table of their own, plain (`PlainTasks`,
memory_plain.py: read it to learn the contract) or packed (`PackedTasks`,
memory_packed.py: what `--store memory` uses, measured in docs/benchmarks.md).
Listing sorts the scope's tasks on each call: fine for thousands of tasks;
the SQL stores serve large volumes from an index.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from a2a_grpc.core import states
from a2a_grpc.core.ids import sorted_id
from a2a_grpc.core.listing import TaskQuery
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
from a2a_grpc.stores.memory_packed import PackedTasks
from a2a_grpc.stores.writes import TERMINAL


class TaskTable(Protocol):
    """Where the memory store keeps tasks and their logs (memory_plain.py)."""

    def append(self, scope: Scope, task: Task, events: Sequence[Appended]) -> None: ...

    def get(self, scope: Scope, task_id: str) -> StoredTask | None: ...

    def events(self, scope: Scope, task_id: str, after: int,
               upto: int) -> list[tuple[int, StreamResponse]]: ...

    def list(self, query: TaskQuery) -> tuple[list[Task], int]: ...

    def heads(self) -> Iterator[tuple[Scope, str, int, int]]: ...

    def has(self, scope: Scope, task_id: str) -> bool: ...

    def taken(self, tenant: str, task_id: str) -> bool: ...

    def delete(self, scope: Scope, task_id: str) -> None: ...


@dataclass(slots=True)
class MemoryTaskStore:
    tasks: TaskTable = field(default_factory=PackedTasks)
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

    new_task_id = staticmethod(sorted_id)

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
        self.tasks.append(scope, task, events)  # raises TaskFencedError (stores/fence.py)
        task_id = task.id
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
        return self.tasks.get(scope, task_id)

    async def events(
        self, scope: Scope, task_id: str, after: int, upto: int
    ) -> list[tuple[int, StreamResponse]]:
        return self.tasks.events(scope, task_id, after, upto)

    async def list_tasks(self, query: TaskQuery) -> tuple[list[Task], int]:
        return self.tasks.list(query)

    async def task_id_taken(self, tenant: str, task_id: str) -> bool:
        return self.tasks.taken(tenant, task_id)

    async def task_for_message(self, scope: Scope, message_id: str,
                               claim: bool = False) -> str | None:
        return self._messages.get(scope, {}).get(message_id)

    async def set_handed_off(self, scope: Scope, task_id: str, handed_off: bool) -> None:
        if handed_off and self.tasks.has(scope, task_id):
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

    async def register_server(self, alone: bool) -> None:
        return None  # in this process's memory: no other server can be on it

    async def ping(self) -> bool:
        return True

    def take_queued(self) -> bool:
        queued, self._queued = self._queued, False
        return queued

    async def count_states(self) -> dict[int, int]:
        return dict(Counter(state for _, _, _, state in self.tasks.heads()))

    def hold(self, holder: str, seconds: float) -> None:
        return None  # one process: nobody else to take a task over

    async def renew(self, holder: str, until_ns: int,
                    running: Collection[str] | None = None) -> None:
        return None

    async def unsettled(self, claim: Claim | None = None) -> list[tuple[Scope, StoredTask]]:
        running = [(scope, task_id) for scope, task_id, _, state in self.tasks.heads()
                   if state in (states.SUBMITTED, states.WORKING)
                   and (scope, task_id) not in self._handed_off]
        return [(scope, stored) for scope, task_id in running
                if (stored := self.tasks.get(scope, task_id)) is not None]

    async def card_published(self, name: str, digest: str, now_ns: int) -> int:
        known = self._cards.get(name)
        if known is None or known[0] != digest:
            known = self._cards[name] = (digest, now_ns)
        return known[1]

    async def purge(self, before_ns: int) -> int:
        old = [(scope, task_id) for scope, task_id, ns, state in self.tasks.heads()
               if state in TERMINAL and ns < before_ns]
        for scope, task_id in old:
            self.tasks.delete(scope, task_id)
            self._push.pop((scope, task_id), None)
            self._handed_off.discard((scope, task_id))
        self._outbox = {k: e for k, e in self._outbox.items()
                        if self.tasks.has(e.delivery.scope, e.delivery.task_id)}
        for scope, index in self._messages.items():
            self._messages[scope] = {m: t for m, t in index.items() if self.tasks.has(scope, t)}
        return len(old)

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
