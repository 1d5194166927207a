"""In-process event bus: one queue per subscriber.

A queue keeps what its reader has not taken yet, in order. A reader that
stops reading (a client that opens a stream and never reads it) would make
its queue grow with every event, so a queue holds at most `Backlog.events`
events and `Backlog.bytes` bytes (serialized size): past either, the queue
is dropped and its reader gets one retryable error (UnavailableError) naming
the last event it took, from which the client resumes (SubscribeToTask with
Last-Event-ID replays from the durable log). A subscriber that goes away
unsubscribes in `__aexit__` (also when its task is cancelled by a client
hang-up). A queue is a deque with one waiter (a subscription has one
reader), which costs less per event than asyncio.Queue and lets a reader
`peek` at what is already there. Every subscriber of a task is given the
same `Event`; when there are several, it carries a `Renderings`, in which the
first stream to print or serialise the event leaves the bytes for the others.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator, Collection, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Generic, TypeVar

from a2a_grpc.bus.base import END, Control, Event, Published
from a2a_grpc.core.errors import UnavailableError
from a2a_grpc.core.stream import Renderings
from a2a_grpc.generated.a2a_pb2 import StreamResponse

BACKLOG_EVENTS, BACKLOG_BYTES = 2000, 1 << 20


@dataclass(frozen=True, slots=True)
class Backlog:
    """How far one stream's reader may fall behind (ByteSize costs ~0.2 µs an event)."""

    events: int = BACKLOG_EVENTS
    bytes: int = BACKLOG_BYTES


class LocalSubscription:
    __slots__ = ("_backlog", "_bytes", "_lagged", "_last", "_queue", "_sizes", "_task_id",
                 "_waiter")

    def __init__(self, task_id: str, backlog: Backlog) -> None:
        self._queue: deque[Event] = deque()
        # Each queued event's serialized size (0 for an end or an error), counted
        # once as it is queued rather than again as it is taken.
        self._sizes: deque[int] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._task_id, self._backlog = task_id, backlog
        self._bytes = 0
        self._last: int | None = None  # the last event the reader took
        self._lagged = False

    def put(self, event: Event) -> None:
        if self._lagged:
            return  # the reader is told to resume; nothing more is kept for it
        size = 0
        if event.error is None and event is not END:
            size = event.payload.ByteSize()
            if len(self._queue) >= self._backlog.events or \
                    self._bytes + size > self._backlog.bytes:
                self._overflow()
                return
            self._bytes += size
        self._queue.append(event)
        self._sizes.append(size)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def _overflow(self) -> None:
        self._queue.clear()
        self._sizes.clear()
        self._bytes = 0
        self.stop(self.resumable(
            f"this stream fell more than {self._backlog.events} events or "
            f"{self._backlog.bytes} bytes behind its reader and was ended: resume it with "
            f"SubscribeToTask (task {self._task_id})"))

    def resumable(self, why: str, last: int | None = None) -> UnavailableError:
        """A retryable error saying `why`, and from which event to resume: `last`,
        else the last event the reader took."""
        last = self._last if last is None else last
        after = f" with Last-Event-ID {last}" if last is not None else ""
        return UnavailableError(f"{why}{after}", metadata={
            "taskId": self._task_id, **({"lastEventId": str(last)} if last is not None else {})})

    def stop(self, error: BaseException) -> None:
        """Queue `error` after what is queued; nothing more is kept for this reader."""
        if self._lagged:
            return
        self._lagged = True
        self._queue.append(Event(0, StreamResponse(), error))
        self._sizes.append(0)
        self._wake()

    def end(self) -> None:
        self.put(END)

    def peek(self) -> Event | None:
        return self._queue[0] if self._queue else None

    def __len__(self) -> int:
        """Events queued for the reader."""
        return len(self._queue)

    def _taken(self, event: Event) -> Event:
        self._bytes -= self._sizes.popleft()
        if event.error is None and event is not END:
            self._last = event.seq
        return event

    def take(self) -> Event | None:
        return self._taken(self._queue.popleft()) if self._queue else None

    async def next(self) -> Event:
        while not self._queue:
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None
        return self._taken(self._queue.popleft())

    async def __aiter__(self) -> AsyncIterator[Event]:
        while True:
            yield await self.next()


S = TypeVar("S", bound=LocalSubscription)


class Subscribers(Generic[S]):
    """Each task's open subscriptions in this process (a task's set goes when
    its last subscription does)."""

    __slots__ = ("_by_task",)

    def __init__(self) -> None:
        self._by_task: dict[str, set[S]] = {}

    def of(self, task_id: str) -> Collection[S]:
        return self._by_task.get(task_id, ())

    def every(self) -> list[S]:
        return [sub for subs in self._by_task.values() for sub in subs]

    def queued(self) -> int:
        """Events queued for all readers, not yet taken."""
        return sum(len(sub) for subs in self._by_task.values() for sub in subs)

    def interrupt(self, why: str) -> int:
        """End every subscription with a retryable error saying `why` and where
        to resume (EventBus.interrupt); how many were open."""
        every = self.every()
        for sub in every:
            sub.stop(sub.resumable(why))
        return len(every)

    @contextmanager
    def held(self, task_id: str, sub: S) -> Iterator[S]:
        """`sub` counts among the task's subscriptions for the block's duration."""
        self._by_task.setdefault(task_id, set()).add(sub)
        try:
            yield sub
        finally:
            subs = self._by_task.get(task_id)
            if subs is not None:
                subs.discard(sub)
                if not subs:
                    del self._by_task[task_id]


class LocalEventBus:
    def __init__(self, backlog: Backlog | None = None) -> None:
        self._subs: Subscribers[LocalSubscription] = Subscribers()
        self.limits = backlog or Backlog()
        self.published = 0

    def backlog(self) -> int:
        return self._subs.queued()

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None:
        self.published += 1
        self.deliver(task_id, seq, event)

    def deliver(self, task_id: str, seq: int, event: StreamResponse) -> None:
        """Queue an event for this process's subscribers of the task (one
        published here, or come from elsewhere: hub_client.py)."""
        subs = self._subs.of(task_id)
        if subs:
            item = Event(seq, event, None, Renderings() if len(subs) > 1 else None)
            for sub in subs:
                sub.put(item)

    async def publish_many(self, task_id: str, events: Sequence[Published]) -> None:
        self.published += len(events)
        subs = self._subs.of(task_id)
        if subs:
            shared = len(subs) > 1
            for one in events:
                item = Event(one.seq, one.event, None, Renderings() if shared else None)
                for sub in subs:
                    sub.put(item)

    async def publish_error(self, task_id: str, error: BaseException) -> None:
        self.deliver_error(task_id, error)

    def deliver_error(self, task_id: str, error: BaseException) -> None:
        for sub in self._subs.of(task_id):
            sub.put(Event(0, StreamResponse(), error))

    @asynccontextmanager
    async def subscribe(self, task_id: str) -> AsyncIterator[LocalSubscription]:
        with self._subs.held(task_id, LocalSubscription(task_id, self.limits)) as sub:
            yield sub

    def subscriber_count(self, task_id: str) -> int:
        return len(self._subs.of(task_id))

    def interrupt(self, why: str) -> int:
        return self._subs.interrupt(why)

    async def close(self) -> None:
        return None

    async def ping(self) -> bool:
        return True

    async def ask(self, kind: str, scope: tuple[str, str], task_id: str,
                  body: bytes = b"") -> bool:
        return False  # one process: no other replica runs anything

    def answer(self, on: Control) -> None:
        return None
