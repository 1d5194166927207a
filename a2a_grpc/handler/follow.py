"""The sources the handler builds event streams (core.stream.EventStream) from:
a run's own events (`Follow`), a task followed until it settles
(`follow_task`, `open_tail`), one event (`one`)."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import AsyncExitStack
from dataclasses import dataclass

from a2a_grpc.bus.base import END, Event, EventBus, Subscription
from a2a_grpc.core import lifecycle, states
from a2a_grpc.core.errors import FieldViolation, InvalidParamsError, TaskNotFoundError
from a2a_grpc.core.stream import Numbered, Renderings
from a2a_grpc.generated.a2a_pb2 import StreamResponse, Task, TaskState
from a2a_grpc.stores.base import Scope, TaskStore

# -- the sources handler streams read --


def ready(head: Event | None, skip_upto: int) -> bool:
    """Will a stream's next read return at once? Only if the queued event is one
    it passes on (not one it skips as already sent), an error, or its end."""
    return head is not None and (head.error is not None or head is END or head.seq > skip_upto)


class Follow:
    """A run's events, from its first on, until one ends the stream, or the run
    lets go of the task (hand-off: `sub.end()`); then it unsubscribes. A class
    rather than an async generator: an event that is already queued is taken
    without awaiting anything, two coroutine layers less per event of a busy
    stream."""

    __slots__ = ("_done", "_first_seq", "_stack", "_sub", "renderings")

    def __init__(self, stack: AsyncExitStack, sub: Subscription, first_seq: int) -> None:
        self._stack, self._sub, self._first_seq = stack, sub, first_seq
        self._done = False
        self.renderings: Renderings | None = None  # the last event's, if other streams get it

    async def __anext__(self) -> Numbered:
        if not self._done:
            sub = self._sub
            while True:
                event = sub.take()
                if event is None:
                    event = await sub.next()
                if event is END:
                    break
                if event.error is not None:
                    self._done = True
                    await self._stack.aclose()
                    raise event.error
                if event.seq >= self._first_seq:
                    if lifecycle.ends_stream(event.payload):
                        self._done = True
                    self.renderings = event.renderings
                    return event.seq, event.payload
        await self._stack.aclose()  # after the last event: unsubscribe
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self._done = True
        await self._stack.aclose()


async def one(seq: int, event: StreamResponse) -> AsyncGenerator[Numbered, None]:
    yield seq, event


@dataclass(slots=True)
class Tail:
    """A task's subscription opened before its snapshot was read, and what a
    resumed stream replays from the log."""

    stack: AsyncExitStack
    sub: Subscription
    task: Task
    seq: int
    replay: list[tuple[int, StreamResponse]]
    renderings: Renderings | None = None  # follow_task's last event's, if streams share it

    @property
    def state(self) -> TaskState:
        return self.task.status.state


async def open_tail(bus: EventBus, store: TaskStore, scope: Scope, task_id: str,
                    resume: int | None = None) -> Tail:
    """Subscribe, then read the snapshot: no event can fall between the two.
    `resume`: the client's last event id; the events logged after it are read
    for the replay (an id past the task's last event is InvalidParams)."""
    stack = AsyncExitStack()
    try:
        sub = await stack.enter_async_context(bus.subscribe(task_id))
        found = await store.get(scope, task_id)
        if found is None:
            raise TaskNotFoundError(f"task {task_id!r} not found", metadata={"taskId": task_id})
        if resume is not None and resume > found.seq:
            raise InvalidParamsError(
                f"last event id {resume} is past the last event of task {task_id} "
                f"({found.seq})", violations=[FieldViolation(
                    "Last-Event-ID", "the id of an event this task's stream sent")])
        replay = [] if resume is None else await store.events(scope, task_id, resume, found.seq)
    except BaseException:
        await stack.aclose()
        raise
    return Tail(stack, sub, found.task, found.seq, replay)


async def follow_task(tail: Tail, resume: int | None) -> AsyncGenerator[Numbered, None]:
    """The task as it stands (or, on a resume, the events logged after the
    client's last one instead), then live events until the task settles
    (whatever run, or no run, writes them).

    A resume is a replay, not a restart: the stream goes on exactly after the
    client's last event, each event once, in order, so a client applying
    them (chunks appended to an artifact) ends with what it would have had
    without the cut. It opens with no Task: a snapshot of the task as it is
    now, ahead of older events, would show the end before the events that
    lead to it. Without a last event id, §3.1.6 holds: the current Task
    comes first."""
    async with tail.stack:
        if resume is None:
            yield tail.seq, StreamResponse(task=tail.task)
        for seq, logged in tail.replay:
            yield seq, logged
        if tail.state in states.TERMINAL:
            return
        while True:
            event = await tail.sub.next()
            if event is END:
                continue  # a run let go: the task goes on
            if event.error is not None:
                raise event.error
            if event.seq <= tail.seq:
                continue  # already part of the snapshot
            tail.renderings = event.renderings
            yield event.seq, event.payload
            if lifecycle.ends_stream(event.payload):
                return
