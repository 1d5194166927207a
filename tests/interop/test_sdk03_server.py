"""Our client against an A2A 0.3 server we did not write: the official a2a-sdk
0.3's (its own virtualenv, a subprocess), which serves a 0.3 card. The client
reads the card, picks each binding in turn and speaks 0.3 on it, while its
caller sends and reads 1.0 messages."""

from __future__ import annotations

import asyncio
import signal
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.generated import a2a_pb2 as pb
from tests.processes import LISTENING

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.fixture
async def sdk03_server(sdk03_python: Path) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        str(sdk03_python), str(PEERS / "sdk03_server.py"),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        seen = ""
        async with asyncio.timeout(60):
            while not (found := LISTENING.search(line := (await proc.stdout.readline()).decode())):
                seen += line
                if not line:
                    raise AssertionError(f"the 0.3 SDK server did not start: {seen}")
        yield f"http://127.0.0.1:{found.group(2)}"
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_our_client_speaks_0_3_to_a_0_3_agent(sdk03_server: str, binding: str) -> None:
    async with await A2AClient.connect(sdk03_server, ClientOptions(prefer=[binding])) as c:
        assert (c.interface.protocol_binding, c.interface.protocol_version) == (binding, "0.3.0")
        task = (await c.send_text("hello")).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        assert [m.role for m in task.history][:1] == [pb.ROLE_USER]

        events = [e async for e in c.stream_text("again")]
        kinds = [e.WhichOneof("payload") for e in events]
        assert kinds[0] == "task" and "artifact_update" in kinds
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED

        got = await c.get_task(pb.GetTaskRequest(id=task.id, history_length=1))
        assert got.id == task.id and got.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(TaskNotFoundError):
            await c.get_task(pb.GetTaskRequest(id="no-such-task"))
        with pytest.raises(TaskNotCancelableError):
            await c.cancel_task(pb.CancelTaskRequest(id=task.id))
        with pytest.raises(UnsupportedOperationError):  # 0.3 has no ListTasks
            await c.list_tasks(pb.ListTasksRequest())

        asked = (await c.send_text("ask")).task
        assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
        assert asked.status.message.parts[0].text == "What is your answer?"
        made = await c.create_task_push_notification_config(pb.TaskPushNotificationConfig(
            task_id=asked.id, id="hook", url="https://hooks.example.com/a2a", token="t"))
        assert (made.task_id, made.id, made.url) == (asked.id, "hook",
                                                     "https://hooks.example.com/a2a")
        got_config = await c.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=asked.id, id="hook"))
        assert got_config.url == made.url
        delete = pb.DeleteTaskPushNotificationConfigRequest(task_id=asked.id, id="hook")
        if binding != "JSONRPC":  # the 0.3 SDK lists and deletes configs on JSON-RPC alone
            with pytest.raises(UnsupportedOperationError):  # (REST: no route; gRPC: not
                await c.delete_task_push_notification_config(delete)  # implemented)
        else:
            listed = await c.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=asked.id))
            assert [x.id for x in listed.configs] == ["hook"]
            await c.delete_task_push_notification_config(delete)
            listed = await c.list_task_push_notification_configs(
                pb.ListTaskPushNotificationConfigsRequest(task_id=asked.id))
            assert not listed.configs

        slow = (await c.send_message(pb.SendMessageRequest(
            message=c.text_request("slow 3").message,
            configuration=pb.SendMessageConfiguration(return_immediately=True)))).task
        seen = []
        async for event in c.subscribe_to_task(pb.SubscribeToTaskRequest(id=slow.id)):
            seen.append(event)
            if event.HasField("status_update") and "left" in \
                    event.status_update.status.message.parts[0].text:
                break
        canceled = await c.cancel_task(pb.CancelTaskRequest(id=slow.id))
        assert canceled.status.state == pb.TASK_STATE_CANCELED
