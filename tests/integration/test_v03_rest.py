"""A2A 0.3's HTTP+JSON binding (`/v1/...`), byte by byte with plain aiohttp:
ProtoJSON of 0.3's proto, its enum spellings and its error bodies (the
official 0.3 client drives it in tests/interop/test_sdk03.py)."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import Interface, public_card
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from tests.agents import FilesDemo
from tests.bindings import parse_sse
from tests.conftest import Stack, StackFactory


def message(text: str, **extra: Any) -> dict[str, Any]:
    return {"messageId": f"m-{text}-{len(extra)}", "role": "ROLE_USER",
            "content": [{"text": text}], **extra}


async def call(s: Stack, verb: str, path: str, body: Any = None, status: int = 200,
               headers: dict[str, str] | None = None) -> Any:
    async with s.session.request(verb, s.base_url + path, json=body, headers=headers) as resp:
        assert resp.status == status, await resp.text()
        assert resp.content_type == ("application/a2a+json" if path.startswith("/tasks/")
                                     else "application/json")
        return await resp.json()


async def events(s: Stack, verb: str, path: str, body: Any = None) -> list[Any]:
    async with s.session.request(verb, s.base_url + path, json=body) as resp:
        assert resp.status == 200 and resp.content_type == "text/event-stream"
        return [e.data for e in parse_sse(await resp.text())[0]]


async def test_send_get_and_the_same_task_in_10(stack: StackFactory) -> None:
    s = await stack()
    task = (await call(s, "POST", "/v1/message:send", {"message": message("hello")}))["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    assert task["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
    assert task["history"][0]["role"] == "ROLE_USER"
    assert task["history"][0]["content"] == [{"text": "hello"}]
    got = await call(s, "GET", f"/v1/tasks/{task['id']}?historyLength=1")
    assert got["id"] == task["id"] and len(got["history"]) == 1
    new = await call(s, "GET", f"/tasks/{task['id']}")  # 1.0's route, same task
    assert new["artifacts"][0]["parts"] == [{"text": "echo: hello"}]
    reply = await call(s, "POST", "/v1/message:send", {"message": message("reply yo")})
    assert reply == {"message": {"messageId": reply["message"]["messageId"],
                                 "contextId": reply["message"]["contextId"],
                                 "role": "ROLE_AGENT", "content": [{"text": "yo"}]}}


async def test_file_parts(stack: StackFactory) -> None:
    agent = FilesDemo()
    s = await stack(agent, card=agent.card)
    # As the official 0.3 SDK sends b"\x00\x01": the proto field holds its base64 text,
    # which ProtoJSON encodes once more (legacy/proto03.py).
    raw = base64.b64encode(base64.b64encode(b"\x00\x01")).decode()
    m = message("x", content=[{"file": {"fileWithBytes": raw, "mimeType": "image/png",
                                        "name": "a.png"}}, {"text": "echo"}])
    task = (await call(s, "POST", "/v1/message:send", {"message": m}))["task"]
    assert task["history"][0]["content"][0] == {
        "file": {"fileWithBytes": raw, "mimeType": "image/png", "name": "a.png"}}
    new = await call(s, "GET", f"/tasks/{task['id']}")  # 1.0 sees the content itself
    assert new["history"][0]["parts"][0]["raw"] == base64.b64encode(b"\x00\x01").decode()


async def test_stream_and_subscribe_carry_final(stack: StackFactory) -> None:
    s = await stack()
    got = await events(s, "POST", "/v1/message:stream", {"message": message("stream 2")})
    assert [next(iter(e)) for e in got] == ["task", "statusUpdate", "artifactUpdate",
                                            "artifactUpdate", "statusUpdate"]
    assert got[-1]["statusUpdate"]["final"] is True
    assert got[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert "final" not in got[1]["statusUpdate"]  # false: ProtoJSON leaves it out
    body = {"message": message("slow 60"), "configuration": {"blocking": False}}
    task = (await call(s, "POST", "/v1/message:send", body))["task"]
    for verb in ("GET", "POST"):
        async with s.session.request(verb, f"{s.base_url}/v1/tasks/{task['id']}:subscribe") as r:
            assert r.content_type == "text/event-stream"
            first = json.loads((await r.content.readuntil(b"\n\n")).decode().split("data:")[1])
            assert first["task"]["id"] == task["id"]
    await call(s, "POST", f"/v1/tasks/{task['id']}:cancel", {})
    done = await call(s, "POST", f"/v1/tasks/{task['id']}:subscribe", status=501)
    assert done["code"] == -32004  # a final task has nothing to follow (UnsupportedOperation)


async def test_cancel_a_working_task(stack: StackFactory) -> None:
    s = await stack()
    body = {"message": message("slow 60"), "configuration": {"blocking": False}}
    task = (await call(s, "POST", "/v1/message:send", body))["task"]
    canceled = await call(s, "POST", f"/v1/tasks/{task['id']}:cancel", {})
    assert canceled["status"]["state"] == "TASK_STATE_CANCELLED"
    again = await call(s, "POST", f"/v1/tasks/{task['id']}:cancel", {}, status=409)
    assert again["code"] == -32002 and again["message"]


async def test_push_configs(stack: StackFactory) -> None:
    s = await stack()
    task = (await call(s, "POST", "/v1/message:send", {"message": message("hi")}))["task"]
    path = f"/v1/tasks/{task['id']}/pushNotificationConfigs"
    made = await call(s, "POST", path, {
        "parent": f"tasks/{task['id']}", "configId": "c1", "config": {
            "pushNotificationConfig": {"url": "https://hooks.example.com/r", "token": "t",
                                       "authentication": {"schemes": ["Bearer"]}}}})
    assert made == {"name": f"tasks/{task['id']}/pushNotificationConfigs/c1",
                    "pushNotificationConfig": {"id": "c1", "url": "https://hooks.example.com/r",
                                               "token": "t",
                                               "authentication": {"schemes": ["Bearer"]}}}
    bare = await call(s, "POST", path, {"pushNotificationConfig": {
        "id": "c2", "url": "https://hooks.example.com/s"}})
    assert bare["name"].endswith("/c2")
    assert await call(s, "GET", f"{path}/c1") == made
    assert [c["name"] for c in await call(s, "GET", path)] == [made["name"], bare["name"]]
    assert await call(s, "DELETE", f"{path}/c1") == {}
    gone = await call(s, "GET", f"{path}/c1", status=404)
    assert gone["code"] == -32001


async def test_the_card(stack: StackFactory) -> None:
    s = await stack()
    s.handler.card = public_card(s.handler.card, [  # as `serve` does once the ports are bound
        Interface("JSONRPC", s.base_url + "/"), Interface("HTTP+JSON", s.base_url)])
    s.http.app[CARD].update(s.handler.card)
    card = await call(s, "GET", "/v1/card")  # the demo's extended card, in 0.3's shape
    assert card["name"] == s.handler.card.name and card["protocolVersion"] == "0.3.0"
    assert card["url"] == s.base_url + "/" and card["supportedInterfaces"]


@pytest.mark.parametrize(("verb", "path", "body", "status", "code"), [
    ("GET", "/v1/tasks/nope", None, 404, -32001),
    ("POST", "/v1/tasks/nope:cancel", {}, 404, -32001),
    ("POST", "/v1/message:send", {"message": {"role": "ROLE_NOBODY"}}, 422, -32602),
    ("POST", "/v1/message:send", [1], 422, -32602),
    ("GET", "/v1/tasks/x?historyLength=many", None, 422, -32602),
    ("POST", "/v1/tasks/x/pushNotificationConfigs", {"config": 5}, 422, -32602),
    ("POST", "/v1/tasks/x/pushNotificationConfigs", [1], 422, -32602),
    ("POST", "/v1/message:stream", {"message": {"content": [{"file": {}}]}}, 422, -32602),
])
async def test_errors_are_03_shaped(stack: StackFactory, verb: str, path: str, body: Any,
                                    status: int, code: int) -> None:
    s = await stack()
    err = await call(s, verb, path, body, status=status)
    assert err["code"] == code and isinstance(err["message"], str)


async def test_bad_json_and_a_contradicting_version(stack: StackFactory) -> None:
    s = await stack()
    async with s.session.post(s.base_url + "/v1/message:send", data=b"{nope") as resp:
        assert resp.status == 400 and (await resp.json())["code"] == -32700
    wrong = await call(s, "GET", "/v1/tasks/x", status=400, headers={"A2A-Version": "1.0"})
    assert wrong["code"] == -32009 and "0.3" in wrong["message"]


async def test_a_task_across_dialects_and_bindings(stack: StackFactory) -> None:
    """Made by a first-draft client over JSON-RPC, followed by a 0.3 gRPC
    subscriber, canceled by 1.0 gRPC, read over 0.3 REST and the draft's
    JSON-RPC: one task, one history."""
    s = await stack()
    draft = await call(s, "POST", "/", {"jsonrpc": "2.0", "id": 1, "method": "tasks/send",
                                        "params": {"id": "across", "message": {
                                            "role": "user",
                                            "parts": [{"type": "text", "text": "ask"}]}}})
    assert draft["result"]["status"]["state"] == "input-required"
    watching = aiter(V03Stub(s.channel).TaskSubscription(
        v03.TaskSubscriptionRequest(name="tasks/across")))
    assert (await anext(watching)).task.id == "across"
    canceled = await s.binding("grpc").call("CancelTask", pb.CancelTaskRequest(id="across"))
    assert canceled.status.state == pb.TASK_STATE_CANCELED  # type: ignore[attr-defined]
    last = [e async for e in watching][-1]
    assert last.status_update.status.state == v03.TASK_STATE_CANCELLED
    old = await call(s, "GET", "/v1/tasks/across")
    texts = [m["content"][0]["text"] for m in old["history"]]
    assert texts == ["ask", "What is your answer?", "The task was canceled."]
    first = await call(s, "POST", "/", {"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
                                        "params": {"id": "across", "historyLength": 10}},
                       headers={"A2A-Version": "0.1"})
    assert first["result"]["status"]["state"] == "canceled"
    assert [m["parts"][0]["text"] for m in first["result"]["history"]] == texts
