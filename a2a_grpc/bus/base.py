"""The event bus contract.

A publisher (the task's single writer) publishes each event with its
sequence number after the store has it. Every subscriber of that task gets
every event published after it subscribed, in publication order; closing a
subscription affects no other (spec §3.5.2).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import AbstractAsyncContextManager
from typing import NamedTuple, Protocol

from a2a_grpc.core.stream import Renderings
from a2a_grpc.generated.a2a_pb2 import StreamResponse


class Event(NamedTuple):
    seq: int
    payload: StreamResponse
    # Set when the task's writer failed and can record nothing more: streams
    # end with this error instead of waiting for events that will not come.
    error: BaseException | None = None
    # Set when several subscribers get this very event: what their streams
    # make of it, made once (core/stream.py Renderings).
    renderings: Renderings | None = None


class Published(Protocol):
    """An event with its sequence number, as a writer publishes it (the
    runtime's journal entries are such)."""

    @property
    def seq(self) -> int: ...

    @property
    def event(self) -> StreamResponse: ...


# Queued by `Subscription.end()`: the reader stops after what came before it.
END = Event(-1, StreamResponse())


class Subscription(Protocol):
    def __aiter__(self) -> AsyncIterator[Event]: ...

    async def next(self) -> Event:
        """The next event, waiting for it."""

    def peek(self) -> Event | None:
        """The next event if it is already here (it stays queued), else None."""

    def take(self) -> Event | None:
        """The next event if it is already here (taken off the queue), else None."""

    def end(self) -> None:
        """Queue END for this reader only: the events queued so far come first."""


# What a replica does when asked: (kind, (tenant, owner), task id, body) -> did it?
Control = Callable[[str, tuple[str, str], str, bytes], Awaitable[bool]]


class EventBus(Protocol):
    @property
    def published(self) -> int:
        """Events this process published (metrics)."""

    def backlog(self) -> int:
        """Events published but not yet taken by this process's subscribers."""

    async def publish(self, task_id: str, seq: int, event: StreamResponse) -> None: ...

    async def publish_many(self, task_id: str, events: Sequence[Published]) -> None:
        """`publish` each of `events` (consecutive, in order): a writer's burst
        in one call."""

    async def publish_error(self, task_id: str, error: BaseException) -> None:
        """Tell every subscriber of the task that its events stop here."""

    def subscribe(self, task_id: str) -> AbstractAsyncContextManager[Subscription]:
        """Subscribe for the duration of an `async with` block."""

    def subscriber_count(self, task_id: str) -> int:
        """How many subscriptions of this task are open (in this process)."""

    def interrupt(self, why: str) -> int:
        """End every subscription of this process, after what is queued for it,
        with a retryable UnavailableError saying `why` and which event to
        resume after (a draining server: its streams' clients resume on
        another replica). How many were open."""

    async def close(self) -> None:
        """Let go of connections (subscriptions still open end)."""

    async def ping(self) -> bool:
        """Is the bus reachable? (Readiness; the in-process one always is.)"""

    async def ask(self, kind: str, scope: tuple[str, str], task_id: str,
                  body: bytes = b"") -> bool:
        """Ask the other replicas to do `kind` to a task one of them runs
        ("cancel"; "message": take the SendMessageRequest `body`); True once the
        one running it did (False: none runs it). Raises the A2AError the one
        running it refused with (an agent that cannot cancel), as its caller
        would have got it there."""

    def answer(self, on: Control) -> None:
        """Do what other replicas ask (`ask`) with `on`, until `close`."""

