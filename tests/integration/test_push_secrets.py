"""Push credentials are write-only (A2A #1681 / #1750): after a config is
created with `authentication.credentials`, Get and List answer without them on
every binding and dialect of a real `serve`, and deliveries still carry
them. With --push-secret-keys they are sealed at rest, and keys rotate."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest
from cryptography.fernet import Fernet
from google.protobuf import json_format

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from a2a_grpc.stores.sqlite import SqliteTaskStore
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


async def send(stub: A2AServiceStub, text: str, task_id: str = "") -> pb.Task:
    sent: pb.SendMessageResponse = await stub.SendMessage(pb.SendMessageRequest(
        message=user_message(text, task_id=task_id)))
    return sent.task


async def watched(stub: A2AServiceStub, hook_url: str, secret: str) -> pb.Task:
    """A task asking for input, with a webhook holding `secret`."""
    task = await send(stub, "ask")
    await stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
        task_id=task.id, id="c", url=hook_url,
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials=secret)))
    return task


async def dead_letter(db: Path, task_id: str) -> str:
    store = SqliteTaskStore(db)
    await store.open()
    try:
        for _ in range(500):  # the sender gives up on its first attempt; wait for it to
            found = [d for d in await store.dead_letters() if d.task_id == task_id]
            if found:
                return found[0].last_error
            await asyncio.sleep(0.02)
    finally:
        await store.close()
    raise AssertionError(f"no dead letter for {task_id}")


async def test_secrets_are_sealed_at_rest_and_keys_rotate(tmp_path: Path) -> None:
    """`--push-secret-keys FILE`: the store holds no secret in the clear; the
    first key seals, every key opens; a config sealed with a key no longer
    listed is dead-lettered saying so."""
    hook = await start_webhook()
    db, keys = tmp_path / "tasks.db", tmp_path / "keys"
    made = (await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "a2a_grpc", "push-secret-key"],
        capture_output=True, text=True, check=True)).stdout
    old, new = made.strip(), Fernet.generate_key().decode()

    async def serve(*lines: str) -> tuple[Server, A2AServiceStub, grpc.aio.Channel]:
        keys.write_text("# newest first\n" + "\n".join(lines) + "\n")
        server = await start_server("serve", "--store", f"sqlite:///{db}", "--push-secret-keys",
                                    str(keys), "--allow-push-to", "127.0.0.1",
                                    "--allow-http-push", "--grace", "0")
        channel = await wait_serving(server.grpc_port, server.proc)
        return server, A2AServiceStub(channel), channel

    server, stub, channel = await serve(old)
    try:
        one = await watched(stub, hook.url("/one"), "secret-one")
        three = await watched(stub, hook.url("/three"), "secret-three")
    finally:
        await channel.close()
        await server.stop()
        reap(server.proc)
    with sqlite3.connect(db) as raw:
        bodies = b"".join(row[0] for row in raw.execute("SELECT body FROM a2a_push_configs"))
    assert b"secret-one" not in bodies and b"secret-three" not in bodies
    assert bodies.count(b"sealed:fernet:") == 2

    server, stub, channel = await serve(new, old)  # rotated: the old key still opens
    try:
        await send(stub, "42", one.id)
        [hit] = (await hook.wait_for("/one", 1))[:1]
        assert hit.headers["Authorization"] == "Bearer secret-one"
        two = await watched(stub, hook.url("/two"), "secret-two")  # sealed with the new key
    finally:
        await channel.close()
        await server.stop()
        reap(server.proc)

    server, stub, channel = await serve(new)  # the old key retired
    try:
        await send(stub, "42", two.id)
        [hit] = (await hook.wait_for("/two", 1))[:1]
        assert hit.headers["Authorization"] == "Bearer secret-two"
        await send(stub, "42", three.id)  # sealed with the retired key
        error = await dead_letter(db, three.id)
    finally:
        await channel.close()
        await server.stop()
        reap(server.proc)
    assert "sealed with a key --push-secret-keys no longer holds" in error
    assert not hook.at("/three")
    await hook.server.close()


def test_a_bad_key_file_stops_the_start(tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    keys.write_text("not-a-key\n")
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--push-secret-keys",
                           str(keys), "--store", "memory"], capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode != 0
    assert "--push-secret-keys: a line is not a Fernet key" in done.stderr
