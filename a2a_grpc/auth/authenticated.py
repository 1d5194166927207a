"""The authenticator layer: each call is admitted through the Gate, then
handed, with its identity, to the service behind it. The gRPC services (1.0
and 0.3) and the bridge (JSON-RPC, REST, 0.3 REST) all serve the chain it
stands in, so no binding can skip the check."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from a2a_grpc.auth.gate import Gate
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.layer import Layer
from a2a_grpc.core.stream import EventStream


class AuthenticatedService(Layer):
    """`gates`: on a server hosting several agents, each one's (by its card),
    by the name the call reached it by (`ctx.tenant`)."""

    def __init__(self, inner: A2AService, gate: Gate,
                 gates: Mapping[str, Gate] | None = None) -> None:
        super().__init__(inner)
        self.gate = gate
        self.gates = dict(gates or {})

    def _gate(self, ctx: CallContext) -> Gate:
        return self.gates.get(ctx.tenant, self.gate) if self.gates else self.gate

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        return await self.next[rpc](req, await self._gate(ctx).admit(ctx))

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        stream: EventStream = await self.next[rpc](req, await self._gate(ctx).admit(ctx))
        return stream
