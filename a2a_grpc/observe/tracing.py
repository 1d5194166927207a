"""Traces (OpenTelemetry): one tracer for the process, or none.

`install(provider)` picks the tracer provider whose spans we make; with
none installed (the default) every helper here is a no-op costing one
check, not even the API's no-op span. `from_env()` builds a provider from
the standard `OTEL_*` variables when they ask for an exporter (OTLP over
HTTP or gRPC, or the console), else returns None.

Context crosses processes as W3C `traceparent`/`tracestate`: `extract`
reads it from HTTP headers or gRPC metadata, `inject` writes the current
span's into outgoing headers (our client, push notifications). The OTel
context is a contextvar, so an agent's run (an asyncio task started inside
the call) continues the caller's trace, and so do the agent's own calls.

A push notification is sent long after its event, by the sender's loop:
`remember` keeps the context of each task's latest agent run (the most
recent 10,000 tasks) for `recalled` to give the delivery's span.
"""

from __future__ import annotations

import logging
import os
from collections import OrderedDict
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Span, SpanKind, Status, StatusCode, Tracer, TracerProvider

from a2a_grpc.core.extras import missing

__all__ = ["SpanKind", "child", "current", "extract", "failed", "from_env", "inject", "install",
           "recalled", "remember", "start", "tracer"]

log = logging.getLogger("a2a_grpc.tracing")

NAME = "a2a_grpc"
REMEMBERED = 10_000

_tracer: Tracer | None = None
_runs: OrderedDict[str, otel_context.Context] = OrderedDict()


def install(provider: TracerProvider | None) -> None:
    """Make spans with `provider` from now on (None: make none)."""
    global _tracer
    _tracer = None if provider is None else provider.get_tracer(NAME)
    _runs.clear()


def tracer() -> Tracer | None:
    return _tracer


def from_env(environ: Mapping[str, str] | None = None) -> TracerProvider | None:
    """A provider exporting as the `OTEL_*` variables say, or None when they
    name no exporter (`OTEL_TRACES_EXPORTER` unset or `none`, and no
    `OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT`), or `OTEL_SDK_DISABLED=true`."""
    env = os.environ if environ is None else environ
    if env.get("OTEL_SDK_DISABLED", "").strip().lower() == "true":
        return None
    names = [n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if not names and (env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
                      or env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")):
        names = ["otlp"]
    names = [n for n in names if n != "none"]
    if not names:
        return None
    try:
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider as SdkProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise missing(exc, f"exporting traces (OTEL_TRACES_EXPORTER={','.join(names)})",
                      "otel") from None

    # Resource.create() reads OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES.
    resource = Resource.create({"service.name": env.get("OTEL_SERVICE_NAME") or "a2a-grpc"})
    provider = SdkProvider(resource=resource)  # OTEL_TRACES_SAMPLER is read here
    for name in names:
        provider.add_span_processor(BatchSpanProcessor(_exporter(name, env)))
    log.info("tracing: exporting spans (%s)", ", ".join(names))
    return provider


def _exporter(name: str, env: Mapping[str, str]) -> Any:
    if name == "console":
        from opentelemetry.sdk.trace.export import ConsoleSpanExporter
        return ConsoleSpanExporter()
    if name != "otlp":
        raise ValueError(f"OTEL_TRACES_EXPORTER={name!r}: this server exports 'otlp', "
                         "'console' or 'none'")
    protocol = (env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
                or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf")
    if protocol not in ("grpc", "http/protobuf"):
        raise ValueError(f"OTEL_EXPORTER_OTLP_PROTOCOL={protocol!r}: use 'grpc' or "
                         "'http/protobuf'")
    try:
        if protocol == "grpc":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
            return OTLPSpanExporter()
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
            OTLPSpanExporter as HttpExporter,
        )
        return HttpExporter()
    except ImportError as exc:
        raise missing(exc, f"exporting traces over OTLP ({protocol})", "otel") from None


def extract(carrier: Mapping[str, str]) -> otel_context.Context | None:
    """The caller's context from lower-cased headers/metadata, if it sent one."""
    if "traceparent" not in carrier:
        return None
    return propagate.extract(carrier)


def inject(headers: MutableMapping[str, str]) -> None:
    """Add the current span's `traceparent` (and `tracestate`) to `headers`."""
    if trace.get_current_span().get_span_context().is_valid:
        propagate.inject(headers)


def child(name: str, attributes: Mapping[str, Any] | None = None,
          parent: otel_context.Context | None = None,
          kind: SpanKind = SpanKind.INTERNAL) -> AbstractContextManager[Span | None]:
    """A span around the block, current within it (None and no span when no
    tracer is installed, or the trace is not sampled). An exception marks it
    an error and goes on. Without a tracer, one shared do-nothing context:
    every run and commit opens one."""
    if _tracer is None:
        return _NO_SPAN
    return _child(name, attributes, parent, kind)


_NO_SPAN: AbstractContextManager[None] = nullcontext(None)


@contextmanager
def _child(name: str, attributes: Mapping[str, Any] | None,
           parent: otel_context.Context | None, kind: SpanKind) -> Iterator[Span | None]:
    t = _tracer
    if t is None or _sampled_out(parent):
        yield None
        return
    with t.start_as_current_span(name, context=parent, kind=kind,
                                 attributes=attributes) as span:
        yield span


def _sampled_out(parent: otel_context.Context | None) -> bool:
    """The trace goes on without recording (its root was not sampled): a child
    would not be recorded either, so none is made. Its context still travels
    on (the current span's), sampled flag and all."""
    above = trace.get_current_span(parent).get_span_context()
    return above.is_valid and not above.trace_flags.sampled


def start(name: str, attributes: Mapping[str, Any], parent: otel_context.Context | None,
          kind: SpanKind = SpanKind.SERVER) -> Span | None:
    """A span the caller ends (None when no tracer is installed)."""
    t = _tracer
    return None if t is None else t.start_span(name, parent, kind, attributes)


def current(span: Span | None) -> AbstractContextManager[Any]:
    """`span` is the current span within the block (it is not ended after).
    No span (no tracer): the shared do-nothing context, as `child` gives,
    since every call opens one."""
    if span is None:
        return _NO_SPAN
    return trace.use_span(span, end_on_exit=False, record_exception=False,
                          set_status_on_exception=False)


def failed(span: Span | None, reason: str, message: str = "") -> None:
    if span is not None:
        span.set_attribute("a2a.error.reason", reason)
        span.set_status(Status(StatusCode.ERROR, message or reason))


def remember(task_id: str) -> None:
    """The current context is the one a push notification of this task continues."""
    if _tracer is None:
        return
    _runs[task_id] = otel_context.get_current()
    _runs.move_to_end(task_id)
    if len(_runs) > REMEMBERED:
        _runs.popitem(last=False)


def recalled(task_id: str) -> otel_context.Context | None:
    return _runs.get(task_id)
