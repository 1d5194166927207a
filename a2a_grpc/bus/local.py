"""In-process event bus: one queue per subscriber.

Queues are unbounded, so a slow subscriber costs memory, never a lost or
reordered event; a subscriber that goes away unsubscribes in `__aexit__`
(also when its task is cancelled by a client hang-up). A queue is a deque
with one waiter (a subscription has one reader), which costs less per event
than asyncio.Queue and lets a reader `peek` at what is already there.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from generated.a2a_pb2 import StreamResponse

from .base import END, Event


class LocalSubscription:
    __slots__ = ("_queue", "_waiter")

    def __init__(self) -> None:
        self._queue: deque[Event] = deque()
        self._waiter: asyncio.Future[None] | None = None

    def put(self, event: Event) -> None:
        self._queue.append(event)
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def end(self) -> None:
        self.put(END)

    def peek(self) -> Event | None:
        return self._queue[0] if self._queue else None

    def take(self) -> Event | None:
        return self._queue.popleft() if self._queue else None

    async def next(self) -> Event:
        while not self._queue:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._queue.popleft()

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            yield await self.next()


class LocalEventBus:
    def __init__(self) -> None:
        self._subs: dict[str, set[LocalSubscription]] = {}

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        subs = self._subs.get(task_id)
        if subs:
            item = Event(seq, event)
            for sub in subs:
                sub.put(item)

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
