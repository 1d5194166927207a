"""A stream from the agent as its caller reads it: each event once, and,
when the connection drops before the task settles and the agent's card
declares resumable streams, resumed by SubscribeToTask from the last event
seen (Last-Event-ID), at most `retries` times with backoff; then the end of
the stream read whole."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Protocol

from google.protobuf.message import Message

from a2a_grpc.cards.card import RESUMABLE_STREAMS
from a2a_grpc.client.errors import AgentUnreachableError
from a2a_grpc.core import lifecycle
from a2a_grpc.core.errors import A2AError, UnavailableError
from a2a_grpc.core.stream import LAST_EVENT_ID, EventStream
from a2a_grpc.generated import a2a_pb2 as pb

log = logging.getLogger("a2a_grpc.client")


class Opener(Protocol):
    """A2AClient._open: a stream opened, its opening retried."""

    async def __call__(self, rpc: str, req: Message, extra: Mapping[str, str] | None = None,
                       retry: bool = False, extensions: tuple[str, ...] = ()) -> EventStream: ...


async def resuming(open_stream: Opener, scoped: Callable[[Any], Any], rpc: str, req: Message,
                   *, resumable: bool, retries: int,
                   backoff: float) -> AsyncIterator[pb.StreamResponse]:
    """The events of the stream `rpc` opens; resumed from the last event seen
    when it drops (resumable: the agent's card declares resumable streams)."""
    declare = (RESUMABLE_STREAMS.uri,) if resumable else ()  # gRPC then numbers events
    stream = await open_stream(rpc, req, extensions=declare)
    task_id, last_seq, resumes = "", None, 0
    try:
        while True:
            try:
                # A resumed stream replays exactly what follows the last event
                # seen (no Task ahead of it): each event reaches the caller once.
                async for event in stream:
                    if stream.seq is not None:
                        last_seq = stream.seq
                    task_id = task_id or _task_id(event)
                    yield event
                    if lifecycle.ends_stream(event):
                        await _read_end(stream)
                        return
                if not task_id:
                    return
                raise AgentUnreachableError("the stream ended before the task settled")
            except UnavailableError:
                if not (resumable and task_id and last_seq is not None) or \
                        resumes >= retries:
                    raise
            resumes += 1
            log.info("stream of task %s dropped after event %d; resuming", task_id,
                     last_seq)
            await stream.aclose()
            await asyncio.sleep(backoff * 2 ** (resumes - 1))
            sub = scoped(pb.SubscribeToTaskRequest(id=task_id))
            if isinstance(req, pb.SubscribeToTaskRequest | pb.SendMessageRequest) and \
                    req.tenant:
                sub.tenant = req.tenant
            stream = await open_stream("SubscribeToTask", sub,
                                      {LAST_EVENT_ID: str(last_seq),
                                       "Last-Event-ID": str(last_seq)}, retry=True,
                                      extensions=declare)
    finally:
        await stream.aclose()


# How long the end of a stream is waited for after its last event.
END_WAIT = 2.0


async def _read_end(stream: EventStream) -> None:
    """The server ends a stream after the event that settles its task: read
    that end (a gRPC call's status and trailers, the end of the HTTP body)
    rather than cancel the call under it, so that what was recorded of it
    (the inspector's wire view) is what the server did, and an HTTP
    connection goes back to the pool whole. One read, briefly: a server that
    sends more after the end, or never ends, is cut."""
    try:
        async with asyncio.timeout(END_WAIT):
            await anext(aiter(stream), None)
    except (TimeoutError, A2AError):
        pass  # the caller has every event; how the server closed is not its concern


def _task_id(event: pb.StreamResponse) -> str:
    kind = event.WhichOneof("payload")
    if kind == "task":
        return event.task.id
    if kind == "status_update":
        return event.status_update.task_id
    if kind == "artifact_update":
        return event.artifact_update.task_id
    return ""
