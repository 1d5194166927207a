"""Several agents on one server (`serve --agents`): which one a call is for.

A call names its agent by the `tenant` field of its request (what each
agent's card gives gRPC clients: its GRPC interface's `tenant`) or by where
it arrives (the HTTP routes under `/{name}` set `ctx.tenant`). The layer
checks the name, refuses a call naming none or an unknown one, and hands
the call on with `ctx.tenant` set: the handler serves it with that agent's
card and agent, its tasks and push configs scoped to that name (a task id
of one agent is TaskNotFound on another), and authentication and the
per-caller limits behind it count per agent. Each agent's calls are counted
in `a2a_agent_calls_total{agent, method, outcome}` (outcome: OK or the A2A
error reason; a stream counts once, when it opens).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from prometheus_client import CollectorRegistry, Counter

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.contract import A2AService
from a2a_grpc.core.errors import FieldViolation, InvalidParamsError
from a2a_grpc.core.layer import Layer
from a2a_grpc.core.stream import EventStream
from a2a_grpc.observe.observed import outcome_of


class Tenancy(Layer):
    def __init__(self, inner: A2AService, names: frozenset[str],
                 registry: CollectorRegistry | None = None) -> None:
        super().__init__(inner)
        self.names = names
        self._listed = ", ".join(sorted(names))
        self._calls = Counter("a2a_agent_calls", "Calls to each agent a server hosts, by "
                              "operation and outcome.", ("agent", "method", "outcome"),
                              registry=registry)

    def named(self, req: Any, ctx: CallContext) -> CallContext:
        asked = getattr(req, "tenant", "")
        if asked and ctx.tenant and asked != ctx.tenant:
            raise InvalidParamsError(
                f"tenant {asked!r} names another agent than the URL's ({ctx.tenant!r})",
                violations=[FieldViolation("tenant", "must match the agent of the URL")])
        name = asked or ctx.tenant
        if name not in self.names:
            raise InvalidParamsError(
                (f"no agent named {name!r} on this server" if name else
                 "this server hosts several agents: name one in the request's tenant "
                 "(each agent's card gives it)") + f"; its agents are {self._listed}",
                violations=[FieldViolation("tenant", f"one of {self._listed}")],
                metadata={"agents": self._listed})
        return ctx if ctx.tenant == name else dataclasses.replace(ctx, tenant=name)

    async def unary(self, rpc: str, req: Any, ctx: CallContext) -> Any:
        ctx = self.named(req, ctx)
        try:
            answer = await self.next[rpc](req, ctx)
        except BaseException as exc:
            self._calls.labels(ctx.tenant, rpc, outcome_of(exc)).inc()
            raise
        self._calls.labels(ctx.tenant, rpc, "OK").inc()
        return answer

    async def stream(self, rpc: str, req: Any, ctx: CallContext) -> EventStream:
        ctx = self.named(req, ctx)
        try:
            stream: EventStream = await self.next[rpc](req, ctx)
        except BaseException as exc:
            self._calls.labels(ctx.tenant, rpc, outcome_of(exc)).inc()
            raise
        self._calls.labels(ctx.tenant, rpc, "OK").inc()
        return stream
