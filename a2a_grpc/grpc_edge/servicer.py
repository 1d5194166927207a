"""The grpc.aio adapter: one line per RPC, errors rendered in one place.

An A2AError becomes the §5.4 status code with `grpc-status-details-bin`
carrying a `google.rpc.Status` (same code, same message) with ErrorInfo and,
for validation errors, BadRequest. Anything else is logged with its
traceback and sent as INTERNAL with a fixed message (spec §10.6).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import aclosing
from functools import partial
from typing import Any, TypeAlias, TypeVar, cast

import grpc
from google.protobuf import message_factory
from google.protobuf.descriptor import ServiceDescriptor
from google.protobuf.empty_pb2 import Empty
from google.protobuf.message import DecodeError
from google.protobuf.message import Message as ProtoMessage
from grpc_status import rpc_status

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import A2AError, InternalError, ParseError
from a2a_grpc.core.published import service_name
from a2a_grpc.core.rpc_status import rpc_status_of
from a2a_grpc.core.stream import FIRST_EVENT_ID, EventStream
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceServicer

log = logging.getLogger("a2a_grpc.servicer")

Req = TypeVar("Req", bound=ProtoMessage)
Resp = TypeVar("Resp", bound=ProtoMessage)
Ctx: TypeAlias = grpc.aio.ServicerContext
Sent: TypeAlias = pb.StreamResponse | bytes  # an event, or its bytes (`serialized`)


def peer_subject(context: Ctx) -> str | None:
    """The verified client certificate's common name (mutual TLS), if any."""
    auth = context.auth_context() or {}
    names = auth.get("x509_common_name") or auth.get("x509_subject_alternative_name")
    return names[0].decode() if names else None


def call_context(context: Ctx) -> CallContext:
    """Service parameters from gRPC metadata; repeated keys are comma-joined.
    Keys arrive lower case (HTTP/2 allows no other; grpc refuses the rest),
    and only `-bin` keys carry bytes."""
    headers: dict[str, str] = {}
    for key, value in context.invocation_metadata() or ():
        if key.endswith("-bin"):
            continue
        headers[key] = f"{headers[key]},{value}" if key in headers else value
    return CallContext.from_headers(headers, lowered=True, peer=partial(peer_subject, context),
                                    remote=partial(peer_address, context))


def peer_address(context: Ctx) -> str:
    """The client's IP address from gRPC's peer (`ipv4:1.2.3.4:5`, `ipv6:[::1]:5`)."""
    peer = context.peer() or ""
    kind, _, rest = peer.partition(":")
    if kind in ("ipv4", "ipv6"):
        return rest.rpartition(":")[0].strip("[]")
    return peer


async def abort(context: Ctx, exc: BaseException) -> None:
    """End the call with `exc` rendered as a gRPC status (never returns)."""
    if not isinstance(exc, A2AError) or isinstance(exc, InternalError):
        log.error("internal error in gRPC call", exc_info=exc)
    status = rpc_status.to_status(rpc_status_of(exc))
    await context.abort(status.code, status.details, status.trailing_metadata)


SERVICE = pb.DESCRIPTOR.services_by_name["A2AService"]
# This edge's name for what it leaves in an event's Renderings (core/stream.py).
PROTOBUF = "protobuf"


class Malformed:
    """Stands in for a request whose bytes did not parse."""

    __slots__ = ("error",)

    def __init__(self, error: DecodeError) -> None:
        self.error = error


def parser_for(cls: type[ProtoMessage]) -> Callable[[bytes], ProtoMessage | Malformed]:
    def parse(data: bytes) -> ProtoMessage | Malformed:
        try:
            return cls.FromString(data)
        except DecodeError as exc:
            return Malformed(exc)

    return parse


def register(server: grpc.aio.Server, service: ServiceDescriptor,
             behaviours: Mapping[str, Callable[..., Any]]) -> None:
    """Register every RPC of `service`, read from its descriptor, each served by
    `behaviours[rpc name]`.

    Unlike protoc's generated registration, a request that is not valid
    protobuf reaches the behaviour as `Malformed` (see `check_parsed`) and is
    answered with a ParseError (INVALID_ARGUMENT) instead of grpc's own UNKNOWN.
    """
    handlers = {}
    for method in service.methods:
        request = message_factory.GetMessageClass(method.input_type)
        response = message_factory.GetMessageClass(method.output_type)
        make = (grpc.unary_stream_rpc_method_handler if method.server_streaming
                else grpc.unary_unary_rpc_method_handler)
        handlers[method.name] = make(behaviours[method.name],
                                     request_deserializer=parser_for(request),
                                     response_serializer=(serialized if method.server_streaming
                                                          else response.SerializeToString))
    name = service_name(service)  # the published name: what clients' paths say
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(name, handlers),))


class GenericOnly:
    """A server as `add_*_to_server` (generated code) sees it: their methods are
    served by generic handlers only, not also registered. grpc.aio's server
    waits, for every incoming call, on one future per registered method
    (its main loop's asyncio.wait) and makes a new one: each registered
    method costs every call of every method (docs/benchmarks.md, measured
    reasons). A generic handler is found by a dict lookup instead."""

    def __init__(self, server: grpc.aio.Server) -> None:
        self._server = server

    def add_generic_rpc_handlers(self, handlers: Any) -> None:
        self._server.add_generic_rpc_handlers(handlers)

    def add_registered_method_handlers(self, service: str, handlers: Any) -> None:
        pass  # served by the generic handlers added beside them


def serialized(message: ProtoMessage | bytes) -> bytes:
    """A stream's message as it goes out: bytes are an event serialised once for
    all the streams that carry it (`Renderings`, core/stream.py), sent as they are."""
    return message if type(message) is bytes else message.SerializeToString()  # type: ignore[union-attr]


def add_to_server(servicer: A2AServicer, server: grpc.aio.Server) -> None:
    """Register the 1.0 service's RPCs, served by `servicer`."""
    register(server, SERVICE, {m.name: getattr(servicer, m.name) for m in SERVICE.methods})


def check_parsed(request: object) -> None:
    if isinstance(request, Malformed):
        raise ParseError(f"the request is not valid protobuf: {request.error}")


EXTENSIONS = "a2a-extensions"  # the extensions activated for a call, in its initial metadata


def named(activated: set[str]) -> str:
    return ", ".join(sorted(activated))


async def _first_headers(context: Ctx, events: object, ctx: CallContext) -> None:
    """A stream's headers, sent with its first event: gRPC has no per-message
    ids, so the first event's sequence number (the ones after it count up by
    one), to a client that wants it, as it costs an operation before the
    event; and the extensions activated for the call."""
    headers = []
    if isinstance(events, EventStream) and events.announce and events.seq is not None:
        headers.append((FIRST_EVENT_ID, str(events.seq)))
    if ctx.activated:
        headers.append((EXTENSIONS, named(ctx.activated)))
    if headers:
        await context.send_initial_metadata(tuple(headers))


def _streaming(
    method: Callable[[Req, CallContext], Awaitable[AsyncIterator[pb.StreamResponse]]],
) -> Callable[[Req, Ctx], AsyncIterator[Sent]]:
    """A streaming RPC's handler: grpc.aio tells one by `async def` + `yield`,
    and this function is the handler itself, not a method wrapping it (a
    generator layer less on every event)."""
    async def handle(request: Req, context: Ctx) -> AsyncIterator[Sent]:
        try:
            check_parsed(request)
            ctx = call_context(context)
            events = await method(request, ctx)
            shared = events.shared if isinstance(events, EventStream) else None
            async with aclosing(events):  # type: ignore[type-var]
                first = True
                async for event in events:
                    if first:
                        await _first_headers(context, events, ctx)
                    first = False
                    made = None if shared is None else shared()
                    if made is None:
                        yield event
                        continue
                    wire = made.get(PROTOBUF)
                    if wire is None:
                        wire = made[PROTOBUF] = event.SerializeToString()
                    yield cast(bytes, wire)
        except Exception as exc:
            await abort(context, exc)

    return handle


class A2AServicer(A2AServiceServicer):  # type: ignore[misc]  # generated, untyped
    def __init__(self, service: A2AService) -> None:
        self.service = service
        self.SendStreamingMessage = _streaming(service.send_streaming_message)
        self.SubscribeToTask = _streaming(service.subscribe_to_task)

    async def _unary(
        self, method: Callable[[Req, CallContext], Awaitable[Resp]], request: Req, context: Ctx
    ) -> Resp:
        try:
            check_parsed(request)
            ctx = call_context(context)
            answer = await method(request, ctx)
            if ctx.activated:  # the extensions activated for the call, in the response's headers
                await context.send_initial_metadata(((EXTENSIONS, named(ctx.activated)),))
            return answer
        except Exception as exc:
            await abort(context, exc)
            raise  # unreachable: abort raises

    # The streaming RPCs are set in __init__ (`_streaming`).
    async def SendMessage(
        self, request: pb.SendMessageRequest, context: Ctx
    ) -> pb.SendMessageResponse:
        return await self._unary(self.service.send_message, request, context)

    async def GetTask(self, request: pb.GetTaskRequest, context: Ctx) -> pb.Task:
        return await self._unary(self.service.get_task, request, context)

    async def ListTasks(self, request: pb.ListTasksRequest, context: Ctx) -> pb.ListTasksResponse:
        return await self._unary(self.service.list_tasks, request, context)

    async def CancelTask(self, request: pb.CancelTaskRequest, context: Ctx) -> pb.Task:
        return await self._unary(self.service.cancel_task, request, context)

    async def CreateTaskPushNotificationConfig(
        self, request: pb.TaskPushNotificationConfig, context: Ctx
    ) -> pb.TaskPushNotificationConfig:
        return await self._unary(self.service.create_task_push_notification_config,
                                 request, context)

    async def GetTaskPushNotificationConfig(
        self, request: pb.GetTaskPushNotificationConfigRequest, context: Ctx
    ) -> pb.TaskPushNotificationConfig:
        return await self._unary(self.service.get_task_push_notification_config, request, context)

    async def ListTaskPushNotificationConfigs(
        self, request: pb.ListTaskPushNotificationConfigsRequest, context: Ctx
    ) -> pb.ListTaskPushNotificationConfigsResponse:
        return await self._unary(self.service.list_task_push_notification_configs, request, context)

    async def GetExtendedAgentCard(
        self, request: pb.GetExtendedAgentCardRequest, context: Ctx
    ) -> pb.AgentCard:
        return await self._unary(self.service.get_extended_agent_card, request, context)

    async def DeleteTaskPushNotificationConfig(
        self, request: pb.DeleteTaskPushNotificationConfigRequest, context: Ctx
    ) -> Empty:
        return await self._unary(self.service.delete_task_push_notification_config,
                                 request, context)
