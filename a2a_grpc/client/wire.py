"""What a client sends and receives, raw, for whoever debugs it (the inspector's
wire view).

A client made with `ClientOptions(record=True)` reports each exchange to the
Recorder of the current context, if there is one:

    with wire.recording() as recorder:
        await client.send_message(request)
    for exchange in recorder.exchanges: print(exchange.json())

- HTTP (JSON-RPC, HTTP+JSON, the card): the request line, the headers as
  aiohttp sent them, the body as bytes went out; the status, the response
  headers and the body as it came in, or, for a stream, each SSE frame as
  read off the socket, with its time.
- gRPC: the full method name, the metadata sent, each message as JSON, the
  server's initial and trailing metadata and the status.

Without a Recorder in the context nothing is kept, so a shared client records
only for the callers that ask.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import aiohttp
import grpc
from google.protobuf import json_format
from google.protobuf.message import Message

from a2a_grpc.core.published import service_name
from a2a_grpc.generated import a2a_pb2 as pb

SERVICE = service_name(pb.DESCRIPTOR.services_by_name["A2AService"])
LIMIT = 256 * 1024  # of one body or frame kept: a debug view, not an archive

_current: ContextVar[Recorder | None] = ContextVar("a2a_grpc_wire", default=None)
_ids = itertools.count(1)


@dataclass(slots=True)
class Exchange:
    """One request and what answered it. Times are ms after `started`."""

    binding: str  # "HTTP" or "GRPC"
    request: dict[str, Any]
    id: int = field(default_factory=lambda: next(_ids))
    started: float = field(default_factory=time.time)
    response: dict[str, Any] = field(default_factory=dict)
    frames: list[dict[str, Any]] = field(default_factory=list)
    answered: float | None = None  # the response began (HTTP headers, gRPC first message)
    ended: float | None = None
    error: str | None = None

    def _now(self) -> float:
        return round((time.time() - self.started) * 1000, 1)

    def answer(self, **response: Any) -> None:
        self.response.update(response)
        if self.answered is None:
            self.answered = self._now()

    def frame(self, **frame: Any) -> None:
        self.frames.append({"at": self._now(), **frame})

    def end(self, error: str | None = None) -> None:
        if self.ended is None:
            self.ended = self._now()
            self.error = error

    def json(self, frames_from: int = 0) -> dict[str, Any]:
        """As JSON; `frames_from`: only the frames from that index (for updates)."""
        return {"id": self.id, "binding": self.binding, "started": self.started,
                "request": self.request, "response": self.response,
                "frames": self.frames[frames_from:], "framesFrom": frames_from,
                "answered": self.answered, "ended": self.ended, "error": self.error}


class Recorder:
    def __init__(self, on_change: Callable[[Exchange], object] | None = None) -> None:
        self.exchanges: list[Exchange] = []
        self.on_change = on_change
        self._open: dict[int, tuple[Exchange, list[str]]] = {}  # id(response) -> SSE read so far

    def begin(self, binding: str, request: dict[str, Any]) -> Exchange:
        exchange = Exchange(binding, request)
        self.exchanges.append(exchange)
        self.changed(exchange)
        return exchange

    def changed(self, exchange: Exchange) -> None:
        if self.on_change is not None:
            self.on_change(exchange)


@contextmanager
def recording(on_change: Callable[[Exchange], object] | None = None) -> Iterator[Recorder]:
    """Record the exchanges of recording clients within the block."""
    recorder = Recorder(on_change)
    token = _current.set(recorder)
    try:
        yield recorder
    finally:
        _current.reset(token)


def active() -> Recorder | None:
    return _current.get()


def _text(data: bytes) -> str:
    if len(data) > LIMIT:
        return data[:LIMIT].decode("utf-8", "replace") + f"\n… ({len(data)} bytes in all)"
    return data.decode("utf-8", "replace")


# -- HTTP, through aiohttp's tracing --

def trace_config() -> aiohttp.TraceConfig:
    """For a recording client's HTTP session."""
    config = aiohttp.TraceConfig()
    config.on_request_start.append(_http_start)
    config.on_request_headers_sent.append(_http_headers)
    config.on_request_chunk_sent.append(_http_chunk_sent)
    config.on_request_end.append(_http_end)
    config.on_response_chunk_received.append(_http_chunk_received)
    config.on_request_exception.append(_http_failed)
    return config


async def _http_start(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    recorder = active()
    ctx.recorder = recorder
    if recorder is not None:
        ctx.exchange = recorder.begin("HTTP", {"method": params.method, "url": str(params.url),
                                               "headers": dict(params.headers), "body": ""})


async def _http_headers(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    if ctx.recorder is not None:
        ctx.exchange.request["headers"] = dict(params.headers)  # as sent, with aiohttp's own


async def _http_chunk_sent(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    if ctx.recorder is not None:
        ctx.exchange.request["body"] += _text(params.chunk)


async def _http_end(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    if ctx.recorder is None:
        return
    resp = params.response
    ctx.exchange.answer(status=resp.status, reason=resp.reason or "",
                        headers=dict(resp.headers), body="")
    ctx.recorder._open[id(resp)] = (ctx.exchange, [])
    ctx.recorder.changed(ctx.exchange)


async def _http_chunk_received(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    if ctx.recorder is not None:  # the whole body, read at once (not a stream)
        ctx.exchange.response["body"] += _text(params.chunk)
        ctx.exchange.end()
        ctx.recorder.changed(ctx.exchange)


async def _http_failed(_: Any, ctx: SimpleNamespace, params: Any) -> None:
    if ctx.recorder is not None:
        ctx.exchange.end(f"{type(params.exception).__name__}: {params.exception}")
        ctx.recorder.changed(ctx.exchange)


def sse_line(resp: aiohttp.ClientResponse, raw: bytes) -> None:
    """One line of an event stream, as read: a blank one closes a frame."""
    recorder = active()
    open_ = recorder._open.get(id(resp)) if recorder is not None else None
    if recorder is None or open_ is None:
        return
    exchange, pending = open_
    pending.append(_text(raw))
    if raw.strip() == b"" or (len(pending) == 1 and raw.startswith(b":")):
        exchange.frame(raw="".join(pending))  # a frame, or a lone comment (a keep-alive)
        pending.clear()
        recorder.changed(exchange)


def http_done(resp: aiohttp.ClientResponse, error: str | None = None) -> None:
    """The response is released: its exchange is over."""
    recorder = active()
    open_ = recorder._open.pop(id(resp), None) if recorder is not None else None
    if recorder is not None and open_ is not None:
        open_[0].end(error)
        recorder.changed(open_[0])


# -- gRPC --

def _metadata(md: Sequence[tuple[str, Any]] | None) -> list[list[str]]:
    return [[k, v if isinstance(v, str) else f"(binary, {len(v)} bytes)"] for k, v in md or ()]


def _message(message: Message) -> dict[str, Any]:
    return json_format.MessageToDict(message)


def grpc_begin(target: str, rpc: str, metadata: Sequence[tuple[str, str]],
               request: Message) -> tuple[Recorder, Exchange] | None:
    recorder = active()
    if recorder is None:
        return None
    return recorder, recorder.begin("GRPC", {"method": f"/{SERVICE}/{rpc}", "target": target,
                                             "metadata": _metadata(metadata),
                                             "message": _message(request)})


async def grpc_unary(begun: tuple[Recorder, Exchange], call: Any) -> Message:
    """Await a unary call, recording its answer or its status."""
    recorder, exchange = begun
    try:
        result: Message = await call
    except grpc.aio.AioRpcError as err:
        _status(exchange, err)
        recorder.changed(exchange)
        raise
    exchange.answer(initialMetadata=_metadata(await call.initial_metadata()),
                    message=_message(result))
    _status(exchange, call_status=(await call.code(), await call.details(),
                                   await call.trailing_metadata()))
    recorder.changed(exchange)
    return result


class RecordedStream:
    """A server-streaming call whose messages are recorded as they are read."""

    def __init__(self, begun: tuple[Recorder, Exchange], call: Any) -> None:
        self._recorder, self._exchange = begun
        self._call = call

    async def initial_metadata(self) -> Any:
        return await self._call.initial_metadata()

    async def read(self) -> Any:
        exchange = self._exchange
        try:
            message = await self._call.read()
        except grpc.aio.AioRpcError as err:
            _status(exchange, err)
            self._recorder.changed(exchange)
            raise
        if exchange.answered is None:
            exchange.answer(initialMetadata=_metadata(await self._call.initial_metadata()))
        if message is grpc.aio.EOF:
            _status(exchange, call_status=(await self._call.code(), await self._call.details(),
                                           await self._call.trailing_metadata()))
        else:
            exchange.frame(message=_message(message))
        self._recorder.changed(exchange)
        return message

    def cancel(self) -> bool:
        canceled: bool = self._call.cancel()
        if canceled and self._exchange.ended is None:
            self._exchange.response.update(code="CANCELLED",
                                           details="closed by the client after its last read")
            self._exchange.end()
            self._recorder.changed(self._exchange)
        return canceled


def _status(exchange: Exchange, err: grpc.aio.AioRpcError | None = None,
            call_status: tuple[Any, str, Any] | None = None) -> None:
    if err is not None:
        call_status = (err.code(), err.details() or "", err.trailing_metadata())
        if exchange.answered is None:
            exchange.answer(initialMetadata=_metadata(err.initial_metadata()))
    assert call_status is not None
    code, details, trailing = call_status
    exchange.response.update(code=code.name, details=details or "",
                             trailingMetadata=_metadata(trailing))
    exchange.end()  # the status is the outcome; `error` is for calls that never got one
