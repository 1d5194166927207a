"""ObservedService: what one binding's calls do, counted and traced.

Each binding (gRPC, JSON-RPC, REST) calls the service through one of these,
outside authentication and limits, so refusals count too. Per operation: a
SERVER span continuing the caller's `traceparent` (method, binding, task and
context ids, outcome, the A2A error reason), `a2a_requests_total` and
`a2a_request_duration_seconds`. A stream's span stays open until the stream
ends; it is current while the stream starts, so the agent's run (started
there) is its child. Both hooks (core/layer.py) hand back the coroutine of
`_unary` or `_stream` rather than awaiting it in one of their own: a
coroutine less on every call.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any, TypeVar

from google.protobuf.message import Message
from opentelemetry.trace import Span

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import public, wire_of
from a2a_grpc.core.layer import Call, Layer
from a2a_grpc.core.stream import EventStream
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.observe import tracing
from a2a_grpc.observe.metrics import Calls, Metrics

SERVICE = "lf.a2a.v1.A2AService"
R = TypeVar("R", bound=Message)


def outcome_of(exc: BaseException) -> str:
    """The A2A error reason a client is told (INTERNAL_ERROR for a bug), or
    CANCELLED when the client went away."""
    if isinstance(exc, asyncio.CancelledError):
        return "CANCELLED"
    return wire_of(public(exc)).reason


def _ids(req: Message, resp: Message | None = None) -> dict[str, str]:
    """The task and context ids a request or its answer names."""
    out: dict[str, str] = {}
    if isinstance(req, pb.SendMessageRequest):
        task_id, context_id = req.message.task_id, req.message.context_id
        if isinstance(resp, pb.SendMessageResponse):
            if resp.HasField("task"):
                task_id, context_id = resp.task.id, resp.task.context_id
            elif resp.HasField("message"):
                task_id = task_id or resp.message.task_id
                context_id = context_id or resp.message.context_id
    else:
        task_id = getattr(req, "task_id", "") or getattr(req, "id", "")
        context_id = ""
    if task_id:
        out["a2a.task_id"] = task_id
    if context_id:
        out["a2a.context_id"] = context_id
    return out


class ObservedService(Layer):
    """`inner` as seen by `binding` ("grpc", "jsonrpc", "rest")."""

    def __init__(self, inner: A2AService, binding: str, metrics: Metrics | None) -> None:
        super().__init__(inner)
        self.binding, self.metrics = binding, metrics
        self._calls: dict[str, Calls] = {}

    def _attributes(self, rpc: str, req: Message, ctx: CallContext) -> dict[str, Any]:
        attrs: dict[str, Any] = {"rpc.system": "a2a", "rpc.service": SERVICE, "rpc.method": rpc,
                                 "a2a.binding": self.binding, **_ids(req)}
        if ctx.dialect:
            attrs["a2a.dialect"] = ctx.dialect
        if ctx.tenant:
            attrs["a2a.tenant"] = ctx.tenant
        return attrs

    def _span(self, rpc: str, req: Message, ctx: CallContext) -> Span | None:
        if tracing.tracer() is None:
            return None
        return tracing.start(f"{SERVICE}/{rpc}", self._attributes(rpc, req, ctx),
                             tracing.extract(ctx.metadata))

    def _count(self, rpc: str, started: float, outcome: str) -> None:
        m = self.metrics
        if m is None:
            return
        calls = self._calls.get(rpc)
        if calls is None:
            calls = self._calls[rpc] = m.calls(rpc, self.binding)
        calls.record(time.perf_counter() - started, outcome)

    def _begin(self, rpc: str, req: Any, ctx: CallContext) -> tuple[float, Span | None]:
        return time.perf_counter(), self._span(rpc, req, ctx)

    async def _unary(self, rpc: str, call: Callable[[Any, CallContext], Awaitable[R]],
                     req: Any, ctx: CallContext) -> R:
        """Await the call in its span (current meanwhile), then count it and end
        the span, a failure too."""
        started, span = self._begin(rpc, req, ctx)
        try:
            if span is None:  # no tracer: no context to enter (docs/benchmarks.md)
                resp = await call(req, ctx)
            else:
                with tracing.current(span):
                    resp = await call(req, ctx)
        except BaseException as exc:
            self._ended(rpc, started, span, exc)
            raise
        if span is not None:
            span.set_attributes(_ids(req, resp))
        self._ended(rpc, started, span, None)
        return resp

    def _ended(self, rpc: str, started: float, span: Span | None,
               exc: BaseException | None, end_span: bool = True) -> None:
        outcome = "ok" if exc is None else outcome_of(exc)
        self._count(rpc, started, outcome)
        if span is not None:
            span.set_attribute("a2a.outcome", outcome)
            if exc is not None:
                tracing.failed(span, outcome, public(exc).message)
            if end_span or exc is not None:
                span.end()

    async def _stream(self, rpc: str, call: Callable[[Any, CallContext], Awaitable[EventStream]],
                      req: Any, ctx: CallContext) -> EventStream:
        """As `_unary` until the stream is returned; its span ends with it."""
        started, span = self._begin(rpc, req, ctx)
        try:
            with tracing.current(span):
                inner = await call(req, ctx)
        except BaseException as exc:
            self._ended(rpc, started, span, exc)
            raise
        self._ended(rpc, started, span, None, end_span=False)
        if self.metrics is not None or span is not None:
            inner.watcher = _Watched(span, self.metrics, rpc, self.binding)
        return inner

    # -- the hooks (core/layer.py): every operation goes through one --

    def unary(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[Any]:
        return self._unary(rpc, self.next[rpc], req, ctx)

    def stream(self, rpc: str, req: Any, ctx: CallContext) -> Awaitable[EventStream]:
        return self._stream(rpc, self.next[rpc], req, ctx)

    def bound(self, rpc: str, streaming: bool) -> Call:
        return partial(self._stream if streaming else self._unary, rpc, self.next[rpc])


class _Watched:
    """A stream's events counted as they pass (core.stream.Watcher); its span
    and the open-streams gauge end with it."""

    __slots__ = ("_events", "_gauge", "_labels", "_metrics", "_span")

    def __init__(self, span: Span | None, metrics: Metrics | None, rpc: str,
                 binding: str) -> None:
        self._span, self._metrics = span, metrics
        self._labels = (rpc, binding)
        self._events = 0
        self._gauge = None
        if metrics is not None:
            self._gauge = metrics.streams.labels(rpc, binding)
            self._gauge.inc()

    def passed(self, event: pb.StreamResponse) -> None:
        if self._events == 0 and self._span is not None and event.HasField("task"):
            self._span.set_attributes({"a2a.task_id": event.task.id,
                                       "a2a.context_id": event.task.context_id})
        self._events += 1

    def ended(self, exc: BaseException | None) -> None:
        if self._metrics is not None and self._gauge is not None:
            self._gauge.dec()
            self._metrics.stream_events.labels(*self._labels).inc(self._events)
        span = self._span
        if span is not None:
            span.set_attribute("a2a.stream.events", self._events)
            if exc is not None:
                outcome = outcome_of(exc)
                span.set_attribute("a2a.stream.end", outcome)
                tracing.failed(span, outcome, public(exc).message)
            span.end()
