"""In-process event bus: one queue per subscriber.

Queues are unbounded, so a slow subscriber costs memory, never a lost or
reordered event; a subscriber that goes away unsubscribes in `__aexit__`
(also when its task is cancelled by a client hang-up).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from generated.a2a_pb2 import StreamResponse

from .base import Event


class LocalSubscription:
    __slots__ = ("_queue",)

    def __init__(self) -> None:
        self._queue: asyncio.Queue[Event] = asyncio.Queue()

    def put(self, event: Event) -> None:
        self._queue.put_nowait(event)

    async def next(self) -> Event:
        return await self._queue.get()

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            yield await self._queue.get()


class LocalEventBus:
    def __init__(self) -> None:
        self._subs: dict[str, set[LocalSubscription]] = {}

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        for sub in self._subs.get(task_id, ()):
            sub.put(Event(seq, event))

    async def publish_error(self, task_id: str, error: BaseException) -> None:
        for sub in self._subs.get(task_id, ()):
            sub.put(Event(0, StreamResponse(), error))

    @asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[LocalSubscription]:
        sub = LocalSubscription()
        self._subs.setdefault(task_id, set()).add(sub)
        try:
            yield sub
        finally:
            subs = self._subs.get(task_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._subs[task_id]

    def subscriber_count(self, task_id: str) -> int:
        return len(self._subs.get(task_id, ()))
