"""What every operation checks before it acts, and how it reads a caller's
task: service parameters (spec §3.2.6, §3.6), the card's capabilities
(§3.3.4), the caller's scope (tenant, owner), TaskNotFound for a task the
caller can't see (§13.1). Held by the handler and by each of its parts."""

from __future__ import annotations

from collections.abc import Callable

from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import (
    PushNotificationNotSupportedError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.generated.a2a_pb2 import AgentCard, Task
from a2a_grpc.handler.parameters import SUPPORTED_VERSIONS, ServiceParameters
from a2a_grpc.stores import Scope, TaskStore


class Access:
    """`cards(tenant)`: the card of the agent serving `tenant` (one card for
    every tenant, unless the server hosts several agents: a call reaches the
    handler with its agent's name as `ctx.tenant` then, app/tenancy.py)."""

    def __init__(self, cards: Callable[[str], AgentCard], store: TaskStore,
                 versions: tuple[str, ...] = SUPPORTED_VERSIONS,
                 hosted: frozenset[str] = frozenset()) -> None:
        self.cards, self.store = cards, store
        self.versions = versions
        self.hosted = hosted
        self._parameters: dict[str, ServiceParameters] = {}

    def preflight(self, ctx: CallContext) -> None:
        tenant = ctx.tenant if ctx.tenant in self.hosted else ""
        checks = self._parameters.get(tenant)
        if checks is None:
            checks = self._parameters[tenant] = ServiceParameters(self.cards(tenant),
                                                                  self.versions)
        checks.check(ctx)

    def require_streaming(self, ctx: CallContext) -> None:
        if not self.cards(ctx.tenant).capabilities.streaming:
            raise UnsupportedOperationError("this agent does not support streaming")

    def require_push(self, ctx: CallContext) -> None:
        if not self.cards(ctx.tenant).capabilities.push_notifications:
            raise PushNotificationNotSupportedError(
                "this agent does not support push notifications"
            )

    @staticmethod
    def scope(tenant: str, ctx: CallContext) -> Scope:
        return Scope(tenant or ctx.tenant, ctx.user)

    async def task(self, scope: Scope, task_id: str) -> Task:
        found = await self.store.get(scope, task_id)
        if found is None:
            raise TaskNotFoundError(f"task {task_id!r} not found", metadata={"taskId": task_id})
        return found.task
