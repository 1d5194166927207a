"""Several agents behind one handler (`serve --agents`), each the agent of
one tenant: a task's tenant says whose agent runs it, resumes it after a
restart or a replica's loss, and cancels it. One store, bus, actor registry
and lease holder serve them all; a task of one agent is never seen by
another (tasks are scoped by tenant)."""

from __future__ import annotations

from collections.abc import Mapping

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents, TaskSource
from a2a_grpc.core.call import CallContext
from a2a_grpc.core.errors import InvalidParamsError
from a2a_grpc.generated.a2a_pb2 import AgentCard, Task


class Hosted(AgentExecutor):
    def __init__(self, agents: Mapping[str, AgentExecutor]) -> None:
        if not agents:
            raise ValueError("no agents to host")
        self.agents = dict(agents)

    def of(self, tenant: str) -> AgentExecutor:
        agent = self.agents.get(tenant)
        if agent is None:
            raise InvalidParamsError(
                f"no agent named {tenant!r} on this server; its agents are "
                + ", ".join(sorted(self.agents)),
                metadata={"tenant": tenant})
        return agent

    def bind(self, tasks: TaskSource) -> None:
        super().bind(tasks)
        for agent in self.agents.values():
            agent.bind(tasks)

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        await self.of(events.tenant).execute(context, events)

    async def cancel(self, task: Task, events: TaskEvents) -> None:
        await self.of(events.tenant).cancel(task, events)

    async def resume(self, task: Task, events: TaskEvents) -> None:
        await self.of(events.tenant).resume(task, events)

    async def extended_card(self, call: CallContext) -> AgentCard | None:
        return await self.of(call.tenant).extended_card(call)

    @property
    def offers_extended_card(self) -> bool:
        return any(a.offers_extended_card for a in self.agents.values())

    @property
    def resumable(self) -> bool:
        return any(a.resumable for a in self.agents.values())

    @property
    def keeps_conversations(self) -> bool:
        return any(getattr(a, "keeps_conversations", False) for a in self.agents.values())


def agent_for(executor: AgentExecutor, tenant: str) -> AgentExecutor:
    """The agent that serves `tenant`'s tasks: `executor` itself unless it hosts several."""
    return executor.of(tenant) if isinstance(executor, Hosted) else executor
