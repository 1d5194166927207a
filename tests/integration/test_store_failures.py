"""When the task store fails, callers get a clear error and nothing hangs.

The store is the real in-memory one, with a switch that makes writes fail
(like a full disk): a write is never reported as done when it was not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.cards.card import card_for
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.grpc_edge.server import start_grpc
from a2a_grpc.handler.request_handler import RequestHandler
from tests.conftest import send_request, user_message
from tests.fakes import FullDiskStore, Gate, ScriptedAgent
from tests.grpc_errors import fails


@dataclass
class Rig:
    stub: A2AServiceStub
    store: FullDiskStore
    gate: Gate
    handler: RequestHandler


@pytest.fixture
async def rig() -> AsyncIterator[Rig]:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working("first")
        await gate.wait()
        await ev.working("second")
        await ev.complete()

    agent = ScriptedAgent(script)
    store = FullDiskStore()
    handler = RequestHandler(agent, card_for(agent), store=store)
    server = await start_grpc(handler)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    yield Rig(A2AServiceStub(channel), store, gate, handler)
    await channel.close()
    await server.stop(0)
    await handler.close()


async def test_a_send_whose_task_cannot_be_stored_fails(
    rig: Rig, caplog: pytest.LogCaptureFixture
) -> None:
    stub, store = rig.stub, rig.store
    store.writes_fail = True
    with caplog.at_level(logging.ERROR, "a2a_grpc"):
        seen = await fails(stub.SendMessage(send_request("x")))
    assert (seen.code, seen.reason, seen.message) == (
        grpc.StatusCode.INTERNAL, "INTERNAL_ERROR", "Internal error")
    assert "No space left on device" in caplog.text
    store.writes_fail = False
    assert (await stub.ListTasks(pb.ListTasksRequest())).total_size == 0
    await asyncio.sleep(0.05)
    assert rig.handler.live_tasks == 0


async def test_streams_end_with_an_error_when_writes_start_failing(rig: Rig) -> None:
    stub, store, gate = rig.stub, rig.store, rig.gate
    stream = stub.SendStreamingMessage(send_request("go"))
    first = await stream.read()
    assert (await stream.read()).status_update.status.state == pb.TASK_STATE_WORKING
    sub = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=first.task.id))
    assert (await sub.read()).task.status.state == pb.TASK_STATE_WORKING
    store.writes_fail = True
    gate.open()
    for call in (stream, sub):
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await asyncio.wait_for(call.read(), 5)
        assert info.value.code() == grpc.StatusCode.INTERNAL
        assert info.value.details() == "Internal error"
    # What was stored before the failure is still there, unchanged.
    store.writes_fail = False
    task = await stub.GetTask(pb.GetTaskRequest(id=first.task.id))
    assert task.status.state == pb.TASK_STATE_WORKING
    assert task.status.message.parts[0].text == "first"


async def test_a_blocking_send_gets_the_error_too(rig: Rig) -> None:
    stub, store, gate = rig.stub, rig.store, rig.gate
    call = asyncio.ensure_future(stub.SendMessage(pb.SendMessageRequest(message=user_message("x"))))
    await asyncio.wait_for(gate.reached.wait(), 5)
    store.writes_fail = True
    gate.open()
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await asyncio.wait_for(call, 5)
    assert info.value.code() == grpc.StatusCode.INTERNAL


@pytest.mark.parametrize("later", [False, True], ids=["refused", "failed-commit"])
@pytest.mark.parametrize("refused", ["artifact", "status message"])
async def test_a_refused_write_leaves_no_trace_in_the_task(refused: str, later: bool) -> None:
    """The runtime applies an event to its task in place, then stores it: when
    the store refuses, the change is undone, so the FAILED task written next
    holds nothing the log lacks. Also when the store accepts the write and
    its commit fails later, after the agent went on (an artifact chunk does
    not wait for its commit): every event after the failed one is undone."""
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working("first")
        await ev.artifact("kept", artifact_id="a", name="out")
        await gate.wait()
        if refused == "artifact":
            await ev.artifact(" lost", artifact_id="a", append=True)
        else:
            await ev.working("lost")
        await ev.complete()

    agent = ScriptedAgent(script)
    store = FullDiskStore()
    handler = RequestHandler(agent, card_for(agent), store=store)
    server = await start_grpc(handler)
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{server.port}")
    try:
        stub = A2AServiceStub(channel)
        stream = stub.SendStreamingMessage(send_request("go"))
        task_id = (await stream.read()).task.id
        await asyncio.wait_for(gate.reached.wait(), 5)
        if later:
            store.fail_later_next = 1
        else:
            store.refuse_next = 1  # this one write; the FAILED status after it is stored
        gate.open()
        seen = [await stream.read()]
        while seen[-1] is not grpc.aio.EOF:
            seen.append(await asyncio.wait_for(stream.read(), 5))
        last = seen[-2]
        assert last.status_update.status.state == pb.TASK_STATE_FAILED
        assert "lost" not in str(seen)  # never streamed: it was never stored
        task = await stub.GetTask(pb.GetTaskRequest(id=task_id))
        assert task.status.state == pb.TASK_STATE_FAILED
        assert [p.text for a in task.artifacts for p in a.parts] == ["kept"]
        assert "lost" not in [p.text for m in task.history for p in m.parts]
    finally:
        await channel.close()
        await server.stop(0)
        await handler.close()

