"""Push credentials are write-only (A2A #1681 / #1750): after a config is
created with `authentication.credentials`, Get and List answer without them on
every binding and generation of a real `serve`, and deliveries still carry
them."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from google.protobuf import json_format

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from tests.conftest import user_message
from tests.processes import Server, reap, start_server, wait_serving
from tests.webhook import start_webhook

SECRET = "s3cret-never-echoed"


@pytest.fixture
async def server() -> AsyncIterator[Server]:
    started = await start_server("serve", "--allow-push-to", "127.0.0.1", "--allow-http-push",
                                 "--grace", "0")
    try:
        yield started
    finally:
        reap(started.proc)


async def rpc(session: aiohttp.ClientSession, base: str, method: str,
              params: dict[str, Any]) -> dict[str, Any]:
    async with session.post(base + "/", json={"jsonrpc": "2.0", "id": 1, "method": method,
                                               "params": params}) as resp:
        body: dict[str, Any] = await resp.json()
    assert "result" in body, body
    return body


async def get(session: aiohttp.ClientSession, url: str) -> Any:
    async with session.get(url) as resp:
        assert resp.status == 200, await resp.text()
        return await resp.json()


async def test_get_and_list_never_answer_the_credentials(server: Server) -> None:
    hook = await start_webhook()
    channel = await wait_serving(server.grpc_port, server.proc)
    stub, old = A2AServiceStub(channel), V03Stub(channel)
    base = server.url
    task = (await stub.SendMessage(pb.SendMessageRequest(message=user_message("ask")))).task
    assert task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    made = await stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
        task_id=task.id, id="c1", url=hook.url("/h"), token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials=SECRET)))
    assert made.authentication.scheme == "Bearer"

    answers: dict[str, Any] = {}
    got = await stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id="c1"))
    listed = await stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    answers["1.0 gRPC get"] = json_format.MessageToDict(got)
    answers["1.0 gRPC list"] = json_format.MessageToDict(listed)
    assert got.authentication.scheme == "Bearer" and not got.authentication.credentials
    assert got.url == hook.url("/h") and got.token == "tok"
    old_name = f"tasks/{task.id}/pushNotificationConfigs/c1"
    answers["0.3 gRPC get"] = json_format.MessageToDict(await old.GetTaskPushNotificationConfig(
        v03.GetTaskPushNotificationConfigRequest(name=old_name)))
    answers["0.3 gRPC list"] = json_format.MessageToDict(await old.ListTaskPushNotificationConfig(
        v03.ListTaskPushNotificationConfigRequest(parent=f"tasks/{task.id}")))
    async with aiohttp.ClientSession() as session:
        answers["1.0 JSON-RPC get"] = await rpc(session, base, "GetTaskPushNotificationConfig",
                                                {"taskId": task.id, "id": "c1"})
        answers["1.0 JSON-RPC list"] = await rpc(session, base, "ListTaskPushNotificationConfigs",
                                                 {"taskId": task.id})
        answers["1.0 REST get"] = await get(session, f"{base}/tasks/{task.id}/"
                                            "pushNotificationConfigs/c1")
        answers["1.0 REST list"] = await get(session, f"{base}/tasks/{task.id}/"
                                             "pushNotificationConfigs")
        answers["0.3 JSON-RPC get"] = await rpc(session, base, "tasks/pushNotificationConfig/get",
                                                {"id": task.id, "pushNotificationConfigId": "c1"})
        answers["0.3 JSON-RPC list"] = await rpc(session, base,
                                                 "tasks/pushNotificationConfig/list",
                                                 {"id": task.id})
        answers["0.3 REST get"] = await get(session, f"{base}/v1/tasks/{task.id}/"
                                            "pushNotificationConfigs/c1")
        answers["0.3 REST list"] = await get(session, f"{base}/v1/tasks/{task.id}/"
                                             "pushNotificationConfigs")
    for where, answer in answers.items():
        text = json.dumps(answer)
        assert hook.url("/h") in text, (where, text)  # the config itself is there...
        assert SECRET not in text, where  # ...without its secret
        assert "Bearer" in text, (where, text)  # the scheme stays

    # the stored config still has them: the next event's delivery carries them
    await stub.SendMessage(pb.SendMessageRequest(message=user_message("42", task_id=task.id)))
    hits = await hook.wait_for("/h", 1)
    assert hits[0].headers["Authorization"] == f"Bearer {SECRET}"
    await channel.close()
    await hook.server.close()
