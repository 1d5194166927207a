"""Gateway mode: the A2A service of a remote gRPC server, as an `A2AService`.

Every call goes to the upstream `lf.a2a.v1.A2AService` with the caller's
service parameters (`a2a-version`, `a2a-extensions`) and credentials
passed on: the headers `authorization`, `cookie` and `x-api-key` and any
other the operator names (`bridge --forward-header`); a query parameter of a
forwarded name (an API key in the query) becomes metadata of that name, as
gRPC has no query string. Upstream errors come back as the same A2A error
types (rebuilt from the ErrorInfo in `grpc-status-details-bin`), so a
JSON-RPC or REST client sees what a gRPC client would have seen.
"""

from __future__ import annotations

import itertools
import logging
from collections.abc import AsyncGenerator, Callable, Iterator
from typing import Any

import grpc
from google.rpc import status_pb2

from a2a_grpc.core.call import CURRENT_VERSION, CallContext
from a2a_grpc.core.errors import A2AError, InternalError, InvalidParamsError, UnavailableError
from a2a_grpc.core.layer import Operations
from a2a_grpc.core.rpc_status import error_of_status
from a2a_grpc.core.stream import (
    FIRST_EVENT_ID,
    LAST_EVENT_ID,
    RESUMABLE_STREAMS_URI,
    EventStream,
    Numbered,
)
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub

log = logging.getLogger("a2a_grpc.upstream")
FORWARDED = ("authorization", "cookie", "x-api-key")


def error_of_call(err: grpc.aio.AioRpcError, target: str) -> A2AError:
    """What a failed upstream call means for our caller."""
    raw = dict(err.trailing_metadata() or ()).get("grpc-status-details-bin")
    if isinstance(raw, bytes):
        found = error_of_status(status_pb2.Status.FromString(raw))
        if found is not None:
            return found
    code = err.code()
    if code in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        return UnavailableError(
            f"the A2A server at {target} is unavailable ({code.name}); check that it runs"
        )
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return InvalidParamsError(err.details() or None)
    log.error("upstream %s failed: %s %s", target, code, err.details())
    return InternalError()


def grpc_numbers(first_id: str | None, resume: str | None) -> Iterator[int | None] | None:
    """Sequence numbers of a gRPC stream's events (see streams.FIRST_EVENT_ID): counting
    from the first event's, or, on a resume (a replay: no Task ahead of it), from the
    client's last id + 1; None when the server tells neither."""
    if first_id and first_id.strip().isdigit():
        return itertools.count(int(first_id))
    if resume and resume.strip().isdigit():
        return itertools.count(int(resume) + 1)
    return None


async def read_events(call: Any, first: Any, numbers: Iterator[int | None],
                      to_error: Callable[[grpc.aio.AioRpcError], A2AError],
                      ) -> AsyncGenerator[Numbered, None]:
    """The events of a server-streaming call whose first event was already read."""
    try:
        event = first
        while event is not grpc.aio.EOF:
            yield next(numbers), event
            event = await call.read()
    except grpc.aio.AioRpcError as err:
        raise to_error(err) from None
    finally:
        call.cancel()


class UpstreamService(Operations):
    """An A2AService backed by a gRPC channel to another A2A server: every
    operation is the upstream's RPC of the same name (core/layer.py)."""

    def __init__(self, target: str, channel: grpc.aio.Channel | None = None,
                 forward: tuple[str, ...] = ()) -> None:
        self.target = target
        self.forward = tuple(dict.fromkeys(h.lower() for h in (*FORWARDED, *forward)))
        self.channel = channel or grpc.aio.insecure_channel(target)
        self._stub = A2AServiceStub(self.channel)
        self._bind_hooks()

    async def close(self) -> None:
        await self.channel.close()

    def _metadata(self, ctx: CallContext, stream: bool = False) -> list[tuple[str, str]]:
        md = [("a2a-version", ctx.version or CURRENT_VERSION)]
        # A stream asks for its events' numbers: they become the SSE ids it serves.
        extensions = ctx.extensions | {RESUMABLE_STREAMS_URI} if stream else ctx.extensions
        if extensions:
            md.append(("a2a-extensions", ",".join(sorted(extensions))))
        md.extend((k, ctx.metadata[k]) for k in self.forward if k in ctx.metadata)
        if ctx.query:
            md.extend((k.lower(), v) for k, v in ctx.query.items()
                      if k.lower() in self.forward and k.lower() not in ctx.metadata)
        resume = ctx.metadata.get(LAST_EVENT_ID) or ctx.metadata.get("last-event-id")
        if resume:
            md.append((LAST_EVENT_ID, resume))
        return md

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        call = getattr(self._stub, rpc)(req, metadata=self._metadata(ctx))
        try:
            answer = await call
            _activated(dict(await call.initial_metadata() or ()), ctx)
        except grpc.aio.AioRpcError as err:
            raise error_of_call(err, self.target) from None
        return answer

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        metadata = self._metadata(ctx, stream=True)
        call = getattr(self._stub, rpc)(req, metadata=metadata)
        try:
            first = await call.read()  # errors surface here, before any event
            headers = dict(await call.initial_metadata() or ())
        except grpc.aio.AioRpcError as err:
            raise error_of_call(err, self.target) from None
        _activated(headers, ctx)
        numbers = grpc_numbers(headers.get(FIRST_EVENT_ID), dict(metadata).get(LAST_EVENT_ID))
        return EventStream(
            read_events(call, first, numbers or itertools.repeat(None),
                        lambda err: error_of_call(err, self.target)),
            numbered=numbers is not None)


def _activated(headers: dict[str, Any], ctx: CallContext) -> None:
    """The extensions the upstream activated, as this call's (named in the
    gateway's answer): those the client asked for, not the one the gateway
    asks for itself to number events."""
    named = headers.get("a2a-extensions")
    if named:
        ctx.activated.update(x for x in (u.strip() for u in str(named).split(","))
                             if x and x in ctx.extensions)
