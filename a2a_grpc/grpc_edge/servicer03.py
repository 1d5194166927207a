"""A2A 0.3's gRPC service (`a2a.v1.A2AService`) beside 1.0's on the same server.

Every RPC is a V03Service call, built from the 0.3 proto's service descriptor
(no method written per RPC); errors go out as the 1.0 service's do (the §5.4
status code with a google.rpc.Status), stream events as 0.3 StreamResponses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from typing import Any

import grpc
from google.protobuf.message import Message

from a2a_grpc.cards.card03 import card_out
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService, python_name
from a2a_grpc.generated import a2a_pb2 as v1
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.grpc_edge.servicer import Ctx, abort, call_context, check_parsed, register
from a2a_grpc.legacy import proto03
from a2a_grpc.legacy.service03 import V03Service

SERVICE = v03.DESCRIPTOR.services_by_name["A2AService"]


def add_v03_to_server(service: A2AService, card: Callable[[], v1.AgentCard],
                      server: grpc.aio.Server) -> None:
    """Serve 0.3's RPCs over `service`; `card` gives the public card as it stands."""
    v03_service = V03Service(service, card, card_out)
    behaviours = {m.name: (_streaming if m.server_streaming else _unary)(
        getattr(v03_service, python_name(m.name))) for m in SERVICE.methods}
    register(server, SERVICE, behaviours)


async def _name_activated(context: Ctx, ctx: CallContext) -> None:
    """The extensions activated for the call, in its initial metadata, by 1.0's
    name and 0.3's (x-a2a-extensions)."""
    if ctx.activated:
        named = ", ".join(sorted(ctx.activated))
        await context.send_initial_metadata((("a2a-extensions", named),
                                             ("x-a2a-extensions", named)))


def _unary(call: Callable[..., Any]) -> Callable[[Any, Ctx], Any]:
    async def handle(request: Any, context: Ctx) -> Message:
        try:
            check_parsed(request)
            ctx = call_context(context)
            answer: Message = await call(request, ctx)
            await _name_activated(context, ctx)
            return answer
        except Exception as exc:
            await abort(context, exc)
            raise  # unreachable: abort raises

    return handle


def _streaming(call: Callable[..., Any]) -> Callable[[Any, Ctx], AsyncIterator[Message]]:
    async def handle(request: Any, context: Ctx) -> AsyncIterator[Message]:
        try:
            check_parsed(request)
            ctx = call_context(context)
            events = await call(request, ctx)
            first = True
            async with aclosing(events):
                async for event in events:
                    if first:
                        await _name_activated(context, ctx)
                        first = False
                    yield proto03.event_out(event)
        except Exception as exc:
            await abort(context, exc)

    return handle
