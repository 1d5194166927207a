"""Two handlers on one SQLite store stand for two replicas (`replicated=True`):
the same messageId sent to both at once is worked on past its first event by
one agent only, and both callers get that agent's task."""

from __future__ import annotations

import asyncio
from pathlib import Path

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.cards.card import card_for
from a2a_grpc.core.call import CallContext
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import MessageTakenError
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.conftest import send_request


class Counting(AgentExecutor):
    """Counts the runs that got past their first event (the task's creation)."""

    def __init__(self) -> None:
        self.past_first = 0

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        await events.working()
        self.past_first += 1
        await events.complete("done")


async def test_one_agent_works_on_a_message_sent_to_two_replicas(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "shared.db")
    await store.open()
    agent = Counting()
    replicas = [RequestHandler(agent, card_for(agent), store=store, replicated=True)
                for _ in range(2)]
    try:
        for n in range(10):
            request = send_request(f"hello {n}")
            first, second = await asyncio.gather(
                *(r.send_message(request, CallContext()) for r in replicas))
            assert first.task.id == second.task.id
            assert first.task.status.state == second.task.status.state == \
                pb.TASK_STATE_COMPLETED
        assert agent.past_first == 10  # the other run of each pair stopped at its first event
    finally:
        for r in replicas:
            await r.close()
        await store.close()


async def test_a_streamed_send_that_loses_the_race_is_told_to_retry(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "shared.db")
    await store.open()
    agent = Counting()
    replicas = [RequestHandler(agent, card_for(agent), store=store, replicated=True)
                for _ in range(2)]

    async def stream(handler: RequestHandler, request: pb.SendMessageRequest) -> list[str]:
        try:
            return [e.WhichOneof("payload") or "" async for e in
                    await handler.send_streaming_message(request, CallContext())]
        except MessageTakenError:
            return ["retry"]

    try:
        outcomes = []
        for n in range(10):
            request = send_request(f"hello {n}")
            outcomes.append(sorted(await asyncio.gather(
                *(stream(r, request) for r in replicas)), key=len))
        lost = [o for o in outcomes if o[0] == ["retry"]]
        assert lost, "no race was lost"
        for _, winner in lost:
            assert winner == ["task", "status_update", "status_update"]
        retried = await replicas[0].send_message(request, CallContext())  # the last one again
        assert retried.task.status.state == pb.TASK_STATE_COMPLETED
    finally:
        for r in replicas:
            await r.close()
        await store.close()
