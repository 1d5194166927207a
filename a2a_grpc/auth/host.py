"""gRPC calls to a mounted app, gated by its host app's authentication.

A mounted app's HTTP calls pass through the host app's middleware; its gRPC
port does not. `grpc_identify(metadata)` is the host's check for those
calls (a2a_grpc.mount.A2AApp): it returns who the call is (an Identity,
admitted as that caller, without the card's own schemes, as the ASGI face's
`identify` does), or None, and the call is refused as unauthenticated.

gRPC carried by the host's own server (`grpc="carried"`) does pass through
its middleware: the app's `identify(scope)` names those callers as it names
HTTP ones (`carried_as`), and a call it does not name goes through the
card's schemes, as an HTTP call does.
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
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


# Who the host app's `identify(scope)` named for the carried gRPC call this
# task answers: set around the call by the mounted app, read by ScopeIdentified.
_CARRIED: ContextVar[Identity | None] = ContextVar("a2a_grpc_carried_identity", default=None)


@contextmanager
def carried_as(who: Identity | None) -> Iterator[None]:
    """The carried gRPC call answered inside this block is `who`'s."""
    token = _CARRIED.set(who)
    try:
        yield
    finally:
        _CARRIED.reset(token)


class ScopeIdentified(Layer):
    """A carried gRPC call the host's `identify(scope)` named (`carried_as`)
    is admitted as that caller; any other goes on as it came."""

    def _admitted(self, ctx: CallContext) -> CallContext:
        who = _CARRIED.get()
        return ctx if who is None else dataclasses.replace(ctx, identity=who, user=who.subject)

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        return await self.next[rpc](req, self._admitted(ctx))

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        stream: EventStream = await self.next[rpc](req, self._admitted(ctx))
        return stream
