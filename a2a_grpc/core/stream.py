"""What streaming operations return: events in order, each with its sequence
number in the task's event log (`EventStream`), and the names under which
those numbers travel beside the events (resumable streams). Shared by the
handler, which makes streams, and every edge and client that carries them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Protocol

from a2a_grpc.generated.a2a_pb2 import StreamResponse

Numbered = tuple[int | None, StreamResponse]


class Renderings(dict[str, object]):
    """What edges made of one event that several streams carry, by a name each
    edge chooses: the local bus hands one event object to every subscriber of
    a task, so the first stream to render it leaves its bytes here and the
    others send those instead of making their own. What is rendered, and how,
    is each edge's own business; this is only the place to leave it."""

    __slots__ = ()


class Sharing(Protocol):
    """A source that knows, for the event it returned last, the `Renderings`
    other streams share (None when no other stream carries that event)."""

    @property
    def renderings(self) -> Renderings | None: ...


class Source(Protocol):
    """What an EventStream reads: an async generator of Numbered, or any
    object with the two methods it uses."""

    def __anext__(self) -> Awaitable[Numbered]: ...

    async def aclose(self) -> None: ...


class Watcher(Protocol):
    """Told of a stream's events as they pass, and of its end (observe.observed
    counts them and ends the stream's span): set on the stream itself, so
    watching adds no iterator layer to every event."""

    def passed(self, event: StreamResponse) -> None: ...

    def ended(self, error: BaseException | None) -> None:
        """Once: the stream ended (None: its last event, or it was closed)."""


# gRPC carries no per-message ids: a stream's response headers give the sequence
# number of its first event, and the events after it count up by one.
FIRST_EVENT_ID = "a2a-first-event-id"
# How a client asks SubscribeToTask to resume after an event (HTTP: Last-Event-ID).
LAST_EVENT_ID = "a2a-last-event-id"
# The extension (in the card, and declared by clients in A2A-Extensions) for all of this.
# v2: a resume is a replay, with no Task ahead of it (v1 opened with the current Task).
RESUMABLE_STREAMS_URI = "urn:a2a-grpc:extension:resumable-streams:v2"


class EventStream(AsyncIterator[StreamResponse]):
    """An async iterator of StreamResponse events.

    After each event, `seq` is that event's sequence number in the task's
    event log (the SSE `id:`), or None for an event that has none (a direct
    reply's source may know none). `numbered` is False when the
    source knows no sequence numbers at all (a gateway in front of a gRPC
    server). `ready()` is true when the next event is already here, so a
    transport may gather several into one write; when it says false, the next
    read may wait. `announce` says whether a transport that carries numbers
    apart from the events (gRPC's `a2a-first-event-id` header, one more
    operation before the first event) should send them: the client declared
    the resumable-streams extension. `first_sent` is called once, when the
    transport asks for the second event (it has written the first) or closes
    the stream. Close it (`aclose`) to unsubscribe. `view`, when set, is
    applied to each event before it is returned (how the call's protocol
    version shows it; it returns a copy if it changes anything, as streams
    share their events). `watcher`, when set, is told of each event and of
    the end (`Watcher`). `sharing` (the source, or what stands for it) knows
    the `Renderings` of the event just read when other streams share it;
    `shared()` gives them, or None for an event of this stream's own (not
    shared, or changed by the view).
    """

    __slots__ = ("_first_sent", "_reads", "_ready", "_sharing", "_source", "_viewed",
                 "announce", "numbered", "seq", "view", "watcher")

    def __init__(self, source: Source, *, numbered: bool = True,
                 ready: Callable[[], bool] | None = None, announce: bool = True,
                 first_sent: Callable[[], None] | None = None,
                 sharing: Sharing | None = None) -> None:
        self._source = source
        self._ready = ready
        self._first_sent = first_sent
        self._sharing = sharing
        self._viewed = False  # the last event returned is the view's copy
        self._reads = 0
        self.numbered = numbered
        self.announce = announce
        self.seq: int | None = None
        self.view: Callable[[StreamResponse], StreamResponse] | None = None
        self.watcher: Watcher | None = None

    def ready(self) -> bool:
        return self._ready is not None and self._ready()

    def shared(self) -> Renderings | None:
        """Where to leave, or find, what an edge makes of the last event read."""
        sharing = self._sharing
        return None if sharing is None or self._viewed else sharing.renderings

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamResponse:
        if self._reads < 2:
            self._reads += 1
            if self._reads == 2:
                self._sent_first()
        watcher = self.watcher
        if watcher is None:
            self.seq, event = await self._source.__anext__()
        else:
            try:
                self.seq, event = await self._source.__anext__()
            except StopAsyncIteration:
                self._ended(None)
                raise
            except BaseException as exc:
                self._ended(exc)
                raise
            watcher.passed(event)
        view = self.view
        if view is None:
            return event
        shown = view(event)
        self._viewed = shown is not event
        return shown

    def _ended(self, error: BaseException | None) -> None:
        watcher, self.watcher = self.watcher, None  # told once
        if watcher is not None:
            watcher.ended(error)

    def _sent_first(self) -> None:
        if self._first_sent is not None:
            self._first_sent()
            self._first_sent = None

    async def aclose(self) -> None:
        self._sent_first()
        self._ended(None)
        await self._source.aclose()
