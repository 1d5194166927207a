"""Idempotent sends (spec §3.3.1): a retried messageId never starts the work twice."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.core.call import CallContext
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.housekeeping import HAND_OFF_POLL
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.agents import HandOffAgent
from tests.conftest import Serve, StackFactory, send_request
from tests.fakes import Gate, ScriptedAgent
from tests.grpc_errors import fails


def counting_agent(gate: Gate | None = None) -> ScriptedAgent:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        if gate is not None:
            await gate.wait()
        await ev.complete("done")

    return ScriptedAgent(script)


async def test_a_retry_returns_the_same_task(serve: Serve) -> None:
    agent = counting_agent()
    s = await serve(agent)
    req = send_request("pay the invoice", message_id="msg-42")
    first = (await s.stub.SendMessage(req)).task
    again = (await s.stub.SendMessage(req)).task
    assert again == first and len(agent.contexts) == 1
    events = [e async for e in s.stub.SendStreamingMessage(req)]
    assert [e.WhichOneof("payload") for e in events] == ["task"]
    assert events[0].task.id == first.id and len(agent.contexts) == 1


async def test_concurrent_retries_share_one_run(serve: Serve) -> None:
    gate = Gate()
    agent = counting_agent(gate)
    s = await serve(agent)
    req = send_request("once", message_id="same")
    calls = [asyncio.ensure_future(s.stub.SendMessage(req)) for _ in range(5)]
    await asyncio.wait_for(gate.reached.wait(), 5)
    await asyncio.sleep(0.1)
    gate.open()
    results = await asyncio.gather(*calls)
    assert len({r.task.id for r in results}) == 1
    assert {r.task.status.state for r in results} == {pb.TASK_STATE_COMPLETED}
    assert len(agent.contexts) == 1


async def test_a_retried_stream_follows_the_running_task(serve: Serve) -> None:
    gate = Gate()
    s = await serve(counting_agent(gate))
    req = send_request("go", message_id="stream-1")
    original = s.stub.SendStreamingMessage(req)
    first = await original.read()
    retried = s.stub.SendStreamingMessage(req)  # e.g. after a network error
    snapshot = await retried.read()
    assert snapshot.task.id == first.task.id
    gate.open()
    rest = []
    while (event := await retried.read()) is not grpc.aio.EOF:
        rest.append(event)
    assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    original.cancel()


async def test_reusing_a_message_id_for_another_task_is_invalid(serve: Serve) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    other = (await s.stub.SendMessage(send_request("x", message_id="reused"))).task
    seen = await fails(s.stub.SendMessage(send_request("y", task_id=asked.id,
                                                       message_id="reused")))
    assert (seen.code, seen.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS")
    assert other.id in seen.message


@pytest.mark.parametrize("tenant", ["", "other-tenant"])
async def test_message_ids_are_per_caller_scope(serve: Serve, tenant: str) -> None:
    s = await serve()
    a = send_request("x", message_id="shared")
    a.tenant = "acme"
    b = send_request("x", message_id="shared")
    b.tenant = tenant
    ta = (await s.stub.SendMessage(a)).task
    tb = (await s.stub.SendMessage(b)).task
    assert ta.id != tb.id


async def test_the_follow_up_of_a_task_is_deduplicated_too(serve: Serve) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    answer = send_request("blue", task_id=asked.id, message_id="answer-1")
    done = (await s.stub.SendMessage(answer)).task
    again = (await s.stub.SendMessage(answer)).task  # not "task is completed" (a retry)
    assert again == done and again.status.state == pb.TASK_STATE_COMPLETED


# A retry is answered as the first call would be answered now: for a task its
# agent handed off, at once, though the task may not settle for hours.
# (The timeouts below tell a hang apart from an answer; they time nothing.)
ANSWERED = 10.0


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
async def test_a_retried_send_of_a_handed_off_task_is_answered_at_once(
        stack: StackFactory, binding: str) -> None:
    agent = HandOffAgent()
    s = await stack(agent, card=agent.card)
    client = s.binding(binding)
    request = send_request("handoff", message_id=f"retry-{binding}")
    first = await asyncio.wait_for(client.call("SendMessage", request), ANSWERED)
    again = await asyncio.wait_for(client.call("SendMessage", request), ANSWERED)
    assert isinstance(first, pb.SendMessageResponse) and isinstance(again, pb.SendMessageResponse)
    assert again.task.id == first.task.id
    assert again.task.status.state == first.task.status.state == pb.TASK_STATE_WORKING
    streamed = await asyncio.wait_for(client.stream("SendStreamingMessage", request), ANSWERED)
    assert [e.WhichOneof("payload") for e in streamed] == ["task"]
    assert streamed[0].task.id == first.task.id


async def test_a_retry_on_another_replica_of_a_handed_off_task(tmp_path: Path) -> None:
    """Two handlers on one SQLite file stand for two replicas: the retry lands on
    the one that did not run the task, after the hand-off and while the run
    still held the task (the hand-off is seen from the store's mark)."""
    store = SqliteTaskStore(tmp_path / "shared.db")
    await store.open()
    agent = HandOffAgent()
    one, two = (RequestHandler(agent, agent.card, store=store, replicated=True)
                for _ in range(2))
    try:
        request = send_request("handoff", message_id="across")
        first = await asyncio.wait_for(one.send_message(request, CallContext()), ANSWERED)
        again = await asyncio.wait_for(two.send_message(request, CallContext()), ANSWERED)
        assert again.task.id == first.task.id
        assert again.task.status.state == pb.TASK_STATE_WORKING

        held = send_request("hold", message_id="held")
        holding = asyncio.ensure_future(one.send_message(held, CallContext()))
        await asyncio.wait_for(agent.holding.wait(), ANSWERED)
        retry = asyncio.ensure_future(two.send_message(held, CallContext()))
        done, _ = await asyncio.wait({holding, retry}, timeout=2 * HAND_OFF_POLL)
        assert not done  # both wait for the run, which holds the task WORKING
        agent.release()
        first, again = await asyncio.wait_for(asyncio.gather(holding, retry), ANSWERED)
        assert again.task.id == first.task.id
        assert again.task.status.state == pb.TASK_STATE_WORKING
    finally:
        await one.close()
        await two.close()
        await store.close()
