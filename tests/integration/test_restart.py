"""Durability as a user sees it: a real server on SQLite, killed and restarted."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import grpc
import pytest

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.cards.card import card_for
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.handler.housekeeping import RESTARTED
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.conftest import send_request, user_message
from tests.processes import Server, reap, start_server, wait_serving


async def start(db: Path, agent: str = "tests.agents:PushEnabledDemo"):  # type: ignore[no-untyped-def]
    server = await start_server("serve", "--store", f"sqlite:///{db}", "--agent", agent,
                                "--grace", "1", "--allow-push-to", ".example.com",
                                "--log-level", "DEBUG")
    channel = await wait_serving(server.grpc_port, server.proc)
    STARTED.append(server)
    return server.proc, channel, A2AServiceStub(channel)


STARTED: list[Server] = []


async def read_all(call: grpc.aio.UnaryStreamCall) -> list[pb.StreamResponse]:
    out = []
    while (event := await call.read()) is not grpc.aio.EOF:
        out.append(event)
    return out


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
async def test_everything_written_survives_a_restart(tmp_path: Path, how: int) -> None:
    db = tmp_path / "tasks.db"
    proc, channel, stub = await start(db)
    try:
        done = [(await stub.SendMessage(send_request(f"t{i}"))).task for i in range(3)]
        asked = (await stub.SendMessage(send_request("ask"))).task
        streamed = (await stub.SendMessage(send_request("stream 5"))).task
        config = await stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
            task_id=done[0].id, url="https://hooks.example.com/x"))
        running = (await stub.SendMessage(pb.SendMessageRequest(
            message=user_message("slow 60"),
            configuration=pb.SendMessageConfiguration(return_immediately=True)))).task
        await channel.close()
        proc.send_signal(how)
        code = await asyncio.to_thread(proc.wait, 20)
        assert code == (0 if how == signal.SIGTERM else -signal.SIGKILL)
    finally:
        reap(proc)

    proc, channel, stub = await start(db)
    try:
        for t in done:
            assert await stub.GetTask(pb.GetTaskRequest(id=t.id)) == t
        listed = await stub.ListTasks(pb.ListTasksRequest())
        assert listed.total_size == 6
        failed = await stub.GetTask(pb.GetTaskRequest(id=running.id))
        assert failed.status.state == pb.TASK_STATE_FAILED
        assert failed.status.message.parts[0].text == RESTARTED
        got = await stub.GetTaskPushNotificationConfig(pb.GetTaskPushNotificationConfigRequest(
            task_id=done[0].id, id=config.id))
        assert got == config
        # The log survived too: replay a finished stream from the start.
        replay = await read_all(stub.SubscribeToTask(
            pb.SubscribeToTaskRequest(id=streamed.id), metadata=(("a2a-last-event-id", "0"),)))
        assert [e.artifact_update.artifact.parts[0].text for e in replay
                if e.HasField("artifact_update")] == [f"chunk {i}/5" for i in range(1, 6)]
        # An interrupted task is still waiting, and takes its answer.
        answered = (await stub.SendMessage(send_request("blue", task_id=asked.id))).task
        assert answered.status.state == pb.TASK_STATE_COMPLETED
        # A retried send of a message from before the restart is still recognized.
        retried = pb.SendMessageRequest(message=done[1].history[0])
        retried.message.ClearField("task_id")
        retried.message.ClearField("context_id")
        assert (await stub.SendMessage(retried)).task.id == done[1].id
        await channel.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
        reap(proc)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGTERM])
async def test_a_handed_off_task_survives_a_restart_and_stays_completable(
        tmp_path: Path, how: int) -> None:
    db = tmp_path / "tasks.db"
    proc, channel, stub = await start(db, "tests.agents:HandOffAgent")
    try:
        handed = (await stub.SendMessage(send_request("handoff"))).task
        assert handed.status.state == pb.TASK_STATE_WORKING
        running = (await stub.SendMessage(pb.SendMessageRequest(
            message=user_message("hold"),
            configuration=pb.SendMessageConfiguration(return_immediately=True)))).task
        await channel.close()
        proc.send_signal(how)
        await asyncio.to_thread(proc.wait, 20)
    finally:
        reap(proc)
    proc, channel, stub = await start(db, "tests.agents:HandOffAgent")
    try:
        kept = await stub.GetTask(pb.GetTaskRequest(id=handed.id))
        assert kept == handed  # still WORKING: nobody failed it
        crashed = await stub.GetTask(pb.GetTaskRequest(id=running.id))
        assert crashed.status.state == pb.TASK_STATE_FAILED  # its run was cut short
        done = (await stub.SendMessage(send_request("finish", task_id=handed.id))).task
        assert done.status.state == pb.TASK_STATE_COMPLETED
        assert done.artifacts[0].parts[0].text == "later: finish"
        await channel.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.to_thread(proc.wait, 20)
        reap(proc)


class Resumer(AgentExecutor):
    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        await events.working()

    async def resume(self, task: pb.Task, events: TaskEvents) -> None:
        await events.artifact("picked up where it stopped")
        await events.complete()


async def test_a_resumable_agent_finishes_its_tasks_after_a_restart(tmp_path: Path) -> None:
    store = SqliteTaskStore(tmp_path / "t.db")
    await store.open()
    gate = asyncio.Event()

    class Stuck(AgentExecutor):
        async def execute(self, context: RequestContext, events: TaskEvents) -> None:
            await events.working()
            await gate.wait()

    first = RequestHandler(Stuck(), card_for(Stuck()), store=store)
    from a2a_grpc.core.call import CallContext

    resp = await first.send_message(pb.SendMessageRequest(
        message=user_message("x"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)), CallContext())
    await first.close()  # the process "dies" with the task WORKING
    second = RequestHandler(Resumer(), card_for(Resumer()), store=store)
    assert await second.recover() == 1
    for _ in range(100):
        task = await second.get_task(pb.GetTaskRequest(id=resp.task.id), CallContext())
        if task.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.02)
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "picked up where it stopped"
    await second.close()
    await store.close()


async def test_retention_purges_old_final_tasks(tmp_path: Path) -> None:
    from a2a_grpc.core.call import CallContext
    from a2a_grpc.demos.demo import DemoAgent

    store = SqliteTaskStore(tmp_path / "t.db")
    await store.open()
    handler = RequestHandler(DemoAgent(), card_for(DemoAgent()), store=store)
    ctx = CallContext()
    old = (await handler.send_message(send_request("old"), ctx)).task
    waiting = (await handler.send_message(send_request("ask"), ctx)).task
    await asyncio.sleep(0.3)
    new = (await handler.send_message(send_request("new"), ctx)).task
    assert await handler.purge(max_age_s=0.2) == 1  # only the old, final one
    listed = await handler.list_tasks(pb.ListTasksRequest(), ctx)
    assert {t.id for t in listed.tasks} == {waiting.id, new.id}
    assert old.id not in {t.id for t in listed.tasks}
    await handler.close()
    await store.close()
