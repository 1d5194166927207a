"""The gRPC services as an ASGI application: grpc.aio's method handlers
(what `add_*_to_server` registers) answered over an ASGI server's HTTP/2,
one call a request, the status in the response's trailers (the ASGI
`http.response.trailers` extension, which the server must offer)."""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping, Sequence
from contextlib import aclosing
from typing import Any, NamedTuple

import grpc

from a2a_grpc.core.hangup import hung_up
from a2a_grpc.grpc_edge.asgi import wire
from a2a_grpc.grpc_edge.asgi.context import Aborted, ClientGone, Context

log = logging.getLogger("a2a_grpc.grpc_carried")
Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
UNKNOWN, DEADLINE_EXCEEDED = 2, 4


class _Details(NamedTuple):  # grpc.HandlerCallDetails, as a generic handler is asked
    method: str
    invocation_metadata: tuple[tuple[str, str | bytes], ...]


class _Gone(Exception):
    """The client went away (reset the stream, closed the connection)."""


class GrpcApp:
    """A target for `add_*_to_server` (generated code, health, reflection) and
    the ASGI app that answers the calls to what was added."""

    def __init__(self) -> None:
        self._generic: list[grpc.GenericRpcHandler] = []
        self._found: dict[str, grpc.RpcMethodHandler] = {}

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self._generic.extend(handlers)
        self._found.clear()

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        pass  # served by the generic handlers added beside them

    def handler(self, path: str) -> grpc.RpcMethodHandler | None:
        found = self._found.get(path)
        if found is None:
            for generic in self._generic:
                found = generic.service(_Details(path, ()))
                if found is not None:
                    self._found[path] = found  # only what exists: unknown paths are not kept
                    break
        return found

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        timeout = encoding = None
        for key, value in scope.get("headers") or ():
            if key == b"grpc-timeout":
                timeout = wire.timeout_of(value)
            elif key == b"grpc-encoding":
                encoding = value.decode("latin-1")
        handler = self.handler(path)
        loop = asyncio.get_running_loop()
        context = Context(scope, send, handler.response_serializer if handler else None,
                          None if timeout is None else loop.time() + timeout)
        try:
            if handler is None:
                raise wire.WireError(wire.UNIMPLEMENTED, f"Method not found: {path}")
            if timeout is None:
                await _call(handler, context, receive, encoding)
            else:
                await _call_until(timeout, handler, context, receive, encoding)
        except (_Gone, ClientGone):
            return  # nobody to answer
        except Aborted as exc:
            await _end(context, exc.code, exc.details, exc.trailing)
        except wire.WireError as exc:
            await _end(context, exc.code, str(exc))
        except Exception as exc:  # a servicer's own (ours answer INTERNAL themselves)
            log.exception("gRPC call %s failed", path)
            await _end(context, UNKNOWN, f"Unexpected {type(exc)}: {exc}")  # as grpc.aio


async def _call_until(seconds: float, handler: grpc.RpcMethodHandler, context: Context,
                      receive: Receive, encoding: str | None) -> None:
    """The call, ended at its deadline (not a servicer's own TimeoutError)."""
    limit = asyncio.timeout(seconds)
    try:
        async with limit:
            await _call(handler, context, receive, encoding)
    except TimeoutError:
        if not limit.expired():
            raise
        raise wire.WireError(DEADLINE_EXCEEDED, "Deadline Exceeded") from None


async def _end(context: Context, code: int, details: str,
               trailing: Sequence[tuple[str, str | bytes]] | None = None) -> None:
    try:
        await context.finish(code, details, trailing)
    except Exception as exc:  # the client went away meanwhile
        log.debug("a gRPC call's status was not delivered: %s", exc)


async def _call(handler: grpc.RpcMethodHandler, context: Context, receive: Receive,
                encoding: str | None) -> None:
    if handler.request_streaming:
        requests = _requests(receive, handler.request_deserializer, encoding)
        if handler.response_streaming:
            await _written(handler.stream_stream(requests, context), context)
            await context.finish()
        else:
            await _answer(await handler.stream_unary(requests, context), handler, context)
        return
    request = _parsed(await _single(receive, encoding), handler.request_deserializer)
    this = asyncio.current_task()
    assert this is not None
    watch = _Watch(this, receive)
    # Most calls end before anyone watches: a timer, not a task, per call.
    timer = asyncio.get_running_loop().call_later(WATCH_AFTER, watch.start)
    try:
        if handler.response_streaming:
            await _written(handler.unary_stream(request, context), context)
            await context.finish()
        else:
            await _answer(await handler.unary_unary(request, context), handler, context)
    except asyncio.CancelledError:
        if not watch.gone:
            raise
        this.uncancel()
        raise _Gone from None
    finally:
        timer.cancel()
        watch.call = None


async def _answer(answer: Any, handler: grpc.RpcMethodHandler, context: Context) -> None:
    if context.failed:  # as grpc.aio: a status set, the answer not sent
        await context.finish()
        return
    serialize = handler.response_serializer
    await context.finish(last=wire.framed(answer if serialize is None else serialize(answer)))


async def _written(produced: Any, context: Context) -> None:
    """A streamed answer: what an async generator yields, or what a coroutine
    writes with `context.write` (grpc.aio allows both)."""
    if inspect.isasyncgen(produced):
        async with aclosing(produced):
            async for message in produced:
                await context.write(message)
    else:
        await produced


WATCH_AFTER = 0.5  # seconds a call runs before its client's hang-up is watched for
_WATCHING: set[asyncio.Task[None]] = set()  # what the loop would otherwise hold weakly


class _Watch:
    """Cancels a call whose client goes away before it ends (as grpc.aio
    does), once the call has run WATCH_AFTER seconds. The watch is not
    cancelled when the call ends: it ends with the request's
    `http.disconnect`, and pyvoy fails on a `receive` cancelled while it waits."""

    __slots__ = ("call", "gone", "receive")

    def __init__(self, call: asyncio.Task[Any], receive: Receive) -> None:
        self.call: asyncio.Task[Any] | None = call
        self.receive = receive
        self.gone = False

    def start(self) -> None:
        watching = asyncio.get_running_loop().create_task(self.hang_up())
        _WATCHING.add(watching)
        watching.add_done_callback(_WATCHING.discard)

    async def hang_up(self) -> None:
        await hung_up(self.receive)
        if self.call is not None:
            self.gone = True
            self.call.cancel()


async def _single(receive: Receive, encoding: str | None) -> bytes:
    chunks, size = [], 0
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            raise _Gone
        chunk = event.get("body", b"")
        size += len(chunk)
        if size > wire.MAX_RECEIVE + wire.PREFIX.size:
            raise wire.WireError(wire.RESOURCE_EXHAUSTED, f"Received message larger than "
                                                          f"max ({wire.MAX_RECEIVE})")
        chunks.append(chunk)
        if not event.get("more_body"):
            break
    found = wire.messages(chunks[0] if len(chunks) == 1 else b"".join(chunks), encoding)
    if len(found) != 1:
        raise wire.WireError(wire.INTERNAL, f"a unary call takes one message, not {len(found)}")
    return found[0]


def _parsed(data: bytes, deserialize: Callable[[bytes], Any] | None) -> Any:
    if deserialize is None:
        return data
    try:
        return deserialize(data)
    except Exception as exc:
        raise wire.WireError(wire.INTERNAL, "Exception deserializing request!") from exc


async def _requests(receive: Receive, deserialize: Callable[[bytes], Any] | None,
                    encoding: str | None) -> AsyncIterator[Any]:
    """A client stream's messages as they arrive."""
    pending = b""
    while True:
        event = await receive()
        if event["type"] == "http.disconnect":
            raise _Gone
        pending += event.get("body", b"")
        while len(pending) >= wire.PREFIX.size:
            size = wire.PREFIX.unpack_from(pending)[1]
            if len(pending) < wire.PREFIX.size + size:
                break
            for message in wire.messages(pending[:wire.PREFIX.size + size], encoding):
                yield _parsed(message, deserialize)
            pending = pending[wire.PREFIX.size + size:]
        if not event.get("more_body"):
            if pending:
                raise wire.WireError(wire.INTERNAL, "a message is cut short")
            return
