"""gRPC calls to a mounted app, gated by its host app's authentication.

A mounted app's HTTP calls pass through the host app's middleware; its gRPC
port does not. `grpc_identify(metadata)` is the host's check for those
calls (a2a_grpc.mount.A2AApp): it returns who the call is (an Identity,
admitted as that caller, without the card's own schemes, as the ASGI face's
`identify` does), or None, and the call is refused as unauthenticated.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from a2a_grpc.core.call import CallContext, Identity
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import UnauthenticatedError
from a2a_grpc.core.layer import Layer
from a2a_grpc.core.stream import EventStream

HostIdentify = Callable[[Mapping[str, str]], "Identity | Awaitable[Identity | None] | None"]
REFUSED = "the host app's authentication did not admit this call"


class HostIdentified(Layer):
    """Each call admitted by `identify` (its gRPC metadata, keys lower-cased),
    or refused before anything else sees it."""

    def __init__(self, inner: A2AService, identify: HostIdentify) -> None:
        super().__init__(inner)
        self.identify = identify

    async def _admitted(self, ctx: CallContext) -> CallContext:
        who = self.identify(ctx.metadata)
        if inspect.isawaitable(who):
            who = await who
        if who is None:
            raise UnauthenticatedError(REFUSED)
        return dataclasses.replace(ctx, identity=who, user=who.subject)

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        return await self.next[rpc](req, await self._admitted(ctx))

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        stream: EventStream = await self.next[rpc](req, await self._admitted(ctx))
        return stream
