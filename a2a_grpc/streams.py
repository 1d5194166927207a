"""What streaming operations return: events in order, each with its sequence number."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from generated.a2a_pb2 import StreamResponse

Numbered = tuple[int | None, StreamResponse]


class EventStream(AsyncIterator[StreamResponse]):
    """An async iterator of StreamResponse events.

    After each event, `seq` is that event's sequence number in the task's
    event log (the SSE `id:`), or None for an event that has none (the Task
    snapshot that opens a resumed stream). `numbered` is False when the
    source knows no sequence numbers at all (a gateway in front of a gRPC
    server). Close it (`aclose`) to unsubscribe.
    """

    __slots__ = ("_source", "numbered", "seq")

    def __init__(self, source: AsyncGenerator[Numbered, None], *, numbered: bool = True) -> None:
        self._source = source
        self.numbered = numbered
        self.seq: int | None = None

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> StreamResponse:
        self.seq, event = await self._source.__anext__()
        return event

    async def aclose(self) -> None:
        await self._source.aclose()
