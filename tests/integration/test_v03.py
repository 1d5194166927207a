"""A2A 0.3 over JSON-RPC, byte by byte: plain aiohttp on the wire, so a lenient
client cannot hide a wrong `kind` or enum spelling."""

from __future__ import annotations

import json
from typing import Any

import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import Interface, public_card
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import parse_sse
from tests.conftest import StackFactory
from tests.fakes import ScriptedAgent
from tests.legacy_wire import assert_task_03, message, rpc
from tests.webhook import start_webhook


async def reflect(ctx: RequestContext, ev: TaskEvents) -> None:
    """Answers with the parts it was sent, as an artifact."""
    await ev.working()
    await ev.artifact(list(ctx.message.parts), name="reflected")
    await ev.complete()


async def test_send_answers_a_bare_task_in_03_shapes(stack: StackFactory) -> None:
    s = await stack()
    body = await rpc(s, "message/send", {"message": message("hello")})
    task = body["result"]
    assert_task_03(task)
    assert task["status"]["state"] == "completed"
    assert task["artifacts"][0]["parts"] == [{"kind": "text", "text": "echo: hello"}]
    assert task["history"][0]["role"] == "user"
    reply = (await rpc(s, "message/send", {"message": message("reply hi")}))["result"]
    assert reply["kind"] == "message" and reply["role"] == "agent"
    assert reply["parts"] == [{"kind": "text", "text": "hi"}] and "taskId" not in reply


async def test_file_and_data_parts_both_ways(stack: StackFactory) -> None:
    s = await stack(ScriptedAgent(reflect))
    parts = [{"kind": "file", "file": {"bytes": "aGVsbG8=", "mimeType": "text/plain",
                                       "name": "a.txt"}},
             {"kind": "file", "file": {"uri": "https://example.com/x.png",
                                       "mimeType": "image/png"}},
             {"kind": "data", "data": {"n": 1, "deep": {"x": [1, 2]}}},
             {"text": "no kind"}, {"type": "text", "text": "first-draft type"}]
    task = (await rpc(s, "message/send", {"message": message(parts=parts)}))["result"]
    assert task["artifacts"][0]["parts"] == [
        parts[0], parts[1], parts[2], {"kind": "text", "text": "no kind"},
        {"kind": "text", "text": "first-draft type"}]
    seeds_spelling = {"file": {"fileWithBytes": "aGk=", "mediaType": "text/plain"}}
    task = (await rpc(s, "message/send", {"message": message("x", parts=[seeds_spelling])}))
    assert task["result"]["artifacts"][0]["parts"] == [
        {"kind": "file", "file": {"bytes": "aGk=", "mimeType": "text/plain"}}]


async def test_stream_events_carry_kind_and_final(stack: StackFactory) -> None:
    s = await stack()
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 7, "method": "message/stream",
            "params": {"message": message("stream 2")}}) as resp:
        assert resp.content_type == "text/event-stream"
        events, _ = parse_sse(await resp.text())
    results = [e.data["result"] for e in events]
    assert [e.data["id"] for e in events] == [7] * 5
    assert [(r["kind"], r.get("final")) for r in results] == [
        ("task", None), ("status-update", False), ("artifact-update", None),
        ("artifact-update", None), ("status-update", True)]
    assert results[2]["append"] is False and results[3]["append"] is True
    assert results[3]["lastChunk"] is True and results[4]["status"]["state"] == "completed"


async def test_get_cancel_resubscribe_and_errors(stack: StackFactory) -> None:
    s = await stack()
    slow = (await rpc(s, "message/send", {"message": message("slow 60"),
                                           "configuration": {"blocking": False}}))["result"]
    assert slow["status"]["state"] in ("submitted", "working")
    got = (await rpc(s, "tasks/get", {"id": slow["id"], "historyLength": 0}))["result"]
    assert got["id"] == slow["id"] and got.get("history", []) == []
    canceled = (await rpc(s, "tasks/cancel", {"id": slow["id"]}))["result"]
    assert_task_03(canceled)
    assert canceled["status"]["state"] == "canceled"
    again = await rpc(s, "tasks/cancel", {"id": slow["id"]})
    assert again["error"]["code"] == -32002  # TaskNotCancelable, a 0.3 code too
    assert (await rpc(s, "tasks/get", {"id": "nope"}))["error"]["code"] == -32001
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 1, "method": "tasks/resubscribe",
            "params": {"id": "nope"}}) as resp:
        assert resp.content_type == "text/event-stream"  # refused: a stream of one error
        [err], _ = parse_sse(await resp.text())
    assert err.data["error"]["code"] == -32001


@pytest.mark.parametrize(("params", "field"), [
    ({"message": {**message(), "role": "ROBOT"}}, "message.role"),
    ({"message": {**message(), "parts": [{"kind": "video"}]}}, "message.parts[0].kind"),
    ({"message": {**message(), "parts": [{"kind": "file", "file": {}}]}},
     "message.parts[0].file"),
    ({"message": "not an object"}, "message"),
    ({}, "message"),
])
async def test_bad_03_params_name_the_field(stack: StackFactory, params: dict[str, Any],
                                            field: str) -> None:
    s = await stack()
    err = (await rpc(s, "message/send", params))["error"]
    assert err["code"] == -32602 and field in err["message"]


async def test_version_dispatch(stack: StackFactory) -> None:
    s = await stack()
    ok = await rpc(s, "message/send", {"message": message()}, **{"A2A-Version": "0.3"})
    assert ok["result"]["kind"] == "task"
    mixed = await rpc(s, "tasks/get", {"id": "x"}, **{"A2A-Version": "1.0"})
    assert mixed["error"]["code"] == -32009  # a 0.3 method said to be 1.0
    other = await rpc(s, "GetTask", {"id": "x"}, **{"A2A-Version": "0.3"})
    assert other["error"]["code"] == -32009  # a 1.0 method said to be 0.3
    bare = await rpc(s, "GetTask", {"id": "x"})
    assert bare["error"]["code"] == -32001  # version-less 1.0 names: served as 1.0


async def test_push_configs_in_03_shape(stack: StackFactory) -> None:
    s = await stack()
    task = (await rpc(s, "message/send", {"message": message()}))["result"]
    made = (await rpc(s, "tasks/pushNotificationConfig/set", {
        "taskId": task["id"], "pushNotificationConfig": {
            "url": "https://hooks.example.com/a", "token": "t",
            "authentication": {"schemes": ["Bearer"], "credentials": "c"}}}))["result"]
    assert made == {"taskId": task["id"], "pushNotificationConfig": {
        "id": task["id"], "url": "https://hooks.example.com/a", "token": "t",
        "authentication": {"schemes": ["Bearer"], "credentials": "c"}}}
    got = (await rpc(s, "tasks/pushNotificationConfig/get", {"id": task["id"]}))["result"]
    readable = json.loads(json.dumps(made))
    del readable["pushNotificationConfig"]["authentication"]["credentials"]  # write-only
    assert got == readable
    listed = (await rpc(s, "tasks/pushNotificationConfig/list", {"id": task["id"]}))["result"]
    assert listed == [readable]
    gone = await rpc(s, "tasks/pushNotificationConfig/delete", {
        "id": task["id"], "pushNotificationConfigId": task["id"]})
    assert gone["result"] is None
    missing = await rpc(s, "tasks/pushNotificationConfig/get", {"id": task["id"]})
    assert missing["error"]["code"] == -32001


async def test_one_task_both_generations(stack: StackFactory) -> None:
    s = await stack()
    old = (await rpc(s, "message/send", {"message": message("from 0.3")}))["result"]
    new = await s.binding("grpc").call("GetTask", pb.GetTaskRequest(id=old["id"]))
    assert new.status.state == pb.TASK_STATE_COMPLETED  # type: ignore[attr-defined]
    made = await s.binding("jsonrpc").call("SendMessage", pb.SendMessageRequest(
        message=pb.Message(message_id="m10", role=pb.ROLE_USER, parts=[pb.Part(text="1.0")])))
    seen = (await rpc(s, "tasks/get", {"id": made.task.id},  # type: ignore[attr-defined]
                      **{"A2A-Version": "0.3"}))["result"]
    assert seen["artifacts"][0]["parts"][0]["text"] == "echo: 1.0"
    assert seen["history"][0]["parts"] == [{"kind": "text", "text": "1.0"}]


async def test_names_both_generations_share(stack: StackFactory) -> None:
    """tasks/get|cancel|resubscribe are 0.3 and first-draft names: the version
    decides; without one the answer carries what either reader looks for."""
    s = await stack()
    task = (await rpc(s, "message/send", {"message": message("shared")}))["result"]
    new = (await rpc(s, "tasks/get", {"id": task["id"]}, **{"A2A-Version": "0.3"}))["result"]
    old = (await rpc(s, "tasks/get", {"id": task["id"]}, **{"A2A-Version": "0.1"}))["result"]
    both = (await rpc(s, "tasks/get", {"id": task["id"]}))["result"]
    assert "sessionId" not in new and new["artifacts"][0]["parts"][0]["kind"] == "text"
    assert "kind" not in old and old["sessionId"] == task["contextId"]
    assert old["artifacts"][0]["parts"][0]["type"] == "text" and "history" not in old
    assert both["kind"] == "task" and both["sessionId"] == task["contextId"]
    assert both["artifacts"][0]["parts"][0] == {"kind": "text", "type": "text",
                                                "text": "echo: shared"}
    assert both["artifacts"][0]["index"] == 0 and both["history"]  # 0.3: history by default


async def test_one_card_for_both_generations(stack: StackFactory) -> None:
    s = await stack()
    s.http.app[CARD].update(public_card(s.handler.card, [
        Interface("GRPC", f"127.0.0.1:{s.grpc_server.port}"),
        Interface("JSONRPC", s.base_url + "/"), Interface("HTTP+JSON", s.base_url)]))
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        card = await resp.json()
    async with s.session.get(s.base_url + "/.well-known/agent.json") as resp:
        assert await resp.json() == card
    assert card["supportedInterfaces"]  # 1.0, untouched
    jsonrpc = next(i["url"] for i in card["supportedInterfaces"]
                   if i["protocolBinding"] == "JSONRPC")
    assert (card["url"], card["preferredTransport"], card["protocolVersion"]) == (
        jsonrpc, "JSONRPC", "0.3.0")
    assert card["additionalInterfaces"] == [
        {"url": jsonrpc, "transport": "JSONRPC"}, {"url": s.base_url, "transport": "HTTP+JSON"},
        {"url": f"127.0.0.1:{s.grpc_server.port}", "transport": "GRPC"}]


async def test_push_is_delivered_in_the_shape_of_the_dialect_that_set_it(
        stack: StackFactory) -> None:
    s = await stack(sender=True)
    hook = await start_webhook()
    try:
        draft = (await rpc(s, "tasks/send", {
            "id": "push-gens", "message": {"role": "user", "parts": [
                {"type": "text", "text": "ask"}]},
            "pushNotification": {"url": hook.url("/v01"), "token": "t01"}}))["result"]
        assert draft["status"]["state"] == "input-required"
        await rpc(s, "tasks/pushNotificationConfig/set", {"taskId": "push-gens",
                  "pushNotificationConfig": {"id": "c03", "url": hook.url("/v03"), "token": "t03"}})
        async with s.session.post(s.base_url + "/tasks/push-gens/pushNotificationConfigs",
                                  json={"url": hook.url("/v10")}) as resp:
            assert resp.status == 200, await resp.text()
        done = (await rpc(s, "message/send", {"message": message("yes", taskId="push-gens")}))
        assert done["result"]["status"]["state"] == "completed"
        # Each config is told of each event after it was set; the 1.0 one sees which.
        events = await hook.wait_for("/v10", 1)
        while not events[-1].event.status_update.status.state == pb.TASK_STATE_COMPLETED:
            events = await hook.wait_for("/v10", len(events) + 1)
        v03 = await hook.wait_for("/v03", len(events))
        v01 = await hook.wait_for("/v01", len(events))
    finally:
        await hook.server.close()
    assert events[-1].headers["Content-Type"] == "application/a2a+json"
    for hit in v03:
        assert hit.headers["Content-Type"] == "application/json"
        assert hit.headers["X-A2A-Notification-Token"] == "t03"
        assert_task_03(json.loads(hit.body))
    last = json.loads(v03[-1].body)
    assert last["id"] == "push-gens" and last["status"]["state"] == "completed"
    assert [m["kind"] for m in last["history"]] == ["message"] * len(last["history"])
    draft_last = json.loads(v01[-1].body)
    assert v01[-1].headers["X-A2A-Notification-Token"] == "t01"
    assert draft_last["status"]["state"] == "completed" and "kind" not in draft_last
    assert draft_last["sessionId"] == last["contextId"]
    assert draft_last["artifacts"][0]["index"] == 0
    assert draft_last["artifacts"][0]["parts"][0]["type"] == "text"


async def test_the_authenticated_extended_card_in_03(stack: StackFactory) -> None:
    async def done(_: RequestContext, events: TaskEvents) -> None:
        await events.complete()

    s = await stack(ScriptedAgent(done))  # it offers no extended card of its own
    plain = await rpc(s, "agent/getAuthenticatedExtendedCard", {})
    assert plain["error"]["code"] == -32004  # this agent offers none
    extended = public_card(s.handler.card, [Interface("JSONRPC", s.base_url + "/")])
    extended.skills.add(id="secret", name="for members")
    s.handler.extended_card = extended
    s.handler.card.capabilities.extended_agent_card = True
    card = (await rpc(s, "agent/getAuthenticatedExtendedCard", {}))["result"]
    assert card["skills"][-1]["id"] == "secret"
    assert (card["url"], card["protocolVersion"]) == (s.base_url + "/", "0.3.0")
    async with s.session.get(s.base_url + "/v1/card") as resp:  # 0.3's REST call for it
        assert (await resp.json())["skills"][-1]["id"] == "secret"
