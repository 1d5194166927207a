"""The JSON-RPC 2.0 envelope and everything a client can get wrong with it."""

from __future__ import annotations

import json
from typing import Any

import aiohttp
import pytest

from a2a_grpc.bridge import BridgeConfig
from a2a_grpc.generated import a2a_pb2 as pb
from tests.bindings import parse_sse
from tests.conftest import Stack, StackFactory

MSG = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}


async def post(s: Stack, body: Any, *, raw: bool = False) -> tuple[int, Any]:
    data = body if raw else json.dumps(body)
    async with s.session.post(s.base_url + "/", data=data,
                              headers={"Content-Type": "application/json"}) as resp:
        text = await resp.text()
        return resp.status, (json.loads(text) if text else None)


def code(body: dict[str, Any]) -> int:
    assert body["jsonrpc"] == "2.0"
    return int(body["error"]["code"])


@pytest.fixture
async def s(stack: StackFactory) -> Stack:
    return await stack(config=BridgeConfig(max_body_bytes=64 * 1024, max_json_depth=20))


@pytest.mark.parametrize(("body", "expected"), [
    (b"{not json", -32700),
    (b"\xff\xfe garbage", -32700),
    (b"", -32700),
    (b"42", -32600),
    (b'"SendMessage"', -32600),
    (b"[]", -32600),
    (b'{"id": 1, "method": "GetTask"}', -32600),  # no "jsonrpc"
    (b'{"jsonrpc": "1.0", "id": 1, "method": "GetTask"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1}', -32600),  # no method
    (b'{"jsonrpc": "2.0", "id": 1, "method": 7}', -32600),
    (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "GetTask"}', -32600),
    (b'{"jsonrpc": "2.0", "id": true, "method": "GetTask"}', -32600),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "message/sendx"}', -32601),  # no such method
    (b'{"jsonrpc": "2.0", "id": 1, "method": "message/send"}', -32602),  # 0.3: no message
    (b'{"jsonrpc": "2.0", "id": 1, "method": "NoSuchMethod"}', -32601),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": ["x"]}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": "x"}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": 5}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"historyLength": "x"}}',
     -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask"}', -32602),  # no params: id missing
    (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
     b'{"messageId": "m", "role": "ROLE_ROBOT", "parts": [{"text": "x"}]}}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
     b'{"messageId": "m", "role": "completed", "parts": [{"text": "x"}]}}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": '
     b'{"messageId": "m", "role": "ROLE_USER", "parts": {"text": "x"}}}}', -32602),
    (b'{"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {"status": "working"}}',
     -32602),  # a 0.3 spelling is an unknown enum name, never a silent "any state"
    (b'{"jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "nope"}}', -32001),
])
async def test_bad_requests_get_the_documented_error(s: Stack, body: bytes, expected: int) -> None:
    status, answer = await post(s, body, raw=True)
    assert status == 200  # JSON-RPC errors travel as HTTP 200
    assert code(answer) == expected, answer
    assert answer["error"]["message"]
    info = answer["error"]["data"][0]
    assert info["@type"] == "type.googleapis.com/google.rpc.ErrorInfo"
    assert info["domain"] == "a2a-protocol.org"


async def test_invalid_params_carry_a_bad_request_detail(s: Stack) -> None:
    _, answer = await post(s, {"jsonrpc": "2.0", "id": "a", "method": "SendMessage",
                               "params": {"message": {"role": "ROLE_USER", "parts": []}}})
    assert answer["id"] == "a" and code(answer) == -32602
    info, bad = answer["error"]["data"]
    assert info["reason"] == "INVALID_PARAMS"
    assert [v["field"] for v in bad["fieldViolations"]] == ["message.messageId", "message.parts"]


async def test_unknown_fields_are_ignored(s: Stack) -> None:
    _, answer = await post(s, {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {**MSG, "kind": "message", "futureField": {"x": 1}}, "alsoNew": True}})
    assert answer["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_snake_case_and_enum_numbers_are_accepted(s: Stack) -> None:
    _, answer = await post(s, {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
        "message": {"message_id": "m", "role": 1, "parts": [{"text": "hi"}]}}})
    assert answer["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "echo: hi"


async def test_too_large_and_too_deep(s: Stack) -> None:
    big = {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
           "params": {"message": {**MSG, "parts": [{"text": "x" * 100_000}]}}}
    status, answer = await post(s, big)
    assert (status, code(answer)) == (200, -32600)
    assert "65536 bytes" in answer["error"]["message"]
    deep: Any = "bottom"
    for _ in range(30):
        deep = {"d": deep}
    status, answer = await post(s, {"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                    "params": {"message": {**MSG, "metadata": deep}}})
    assert (status, code(answer)) == (200, -32700)
    very_deep = b"[" * 100_000 + b"]" * 100_000  # would blow the parser's recursion
    status, answer = await post(s, very_deep, raw=True)
    assert (status, code(answer)) in ((200, -32700), (200, -32600))
    # the server is fine afterwards
    _, answer = await post(s, {"jsonrpc": "2.0", "id": 2, "method": "SendMessage",
                               "params": {"message": MSG}})
    assert "result" in answer


async def test_batch(s: Stack) -> None:
    status, answer = await post(s, [
        {"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": MSG}},
        {"jsonrpc": "2.0", "id": 2, "method": "GetTask", "params": {"id": "nope"}},
        {"jsonrpc": "2.0", "method": "SendMessage",  # a notification
         "params": {"message": {**MSG, "messageId": "m2"}}},
        {"jsonrpc": "2.0", "id": 3, "method": "SendStreamingMessage",
         "params": {"message": {**MSG, "messageId": "m3"}}},
        "not a request",
    ])
    assert status == 200
    by_id = {a["id"]: a for a in answer}
    assert len(answer) == 4  # the notification gets no answer
    assert by_id[1]["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
    assert code(by_id[2]) == -32001
    assert code(by_id[3]) == -32600 and "on its own" in by_id[3]["error"]["message"]
    assert code(by_id[None]) == -32600
    listed = await post(s, {"jsonrpc": "2.0", "id": 9, "method": "ListTasks", "params": {}})
    assert listed[1]["result"]["totalSize"] == 2  # the notification did run


@pytest.mark.parametrize("method", ["message/stream", "tasks/resubscribe",
                                    "tasks/sendSubscribe", "SendStreamingMessage",
                                    "SubscribeToTask"])
async def test_batch_refuses_every_dialects_streaming_method(s: Stack, method: str) -> None:
    """Each dialect's streaming method in a batch is that member's -32600,
    whether its params would have failed first or not (0.3's and the first
    draft's once answered HTTP 500 here)."""
    for params in ({}, {"id": "nope"}, {"message": MSG}):
        status, answer = await post(s, [{"jsonrpc": "2.0", "id": 1, "method": method,
                                         "params": params},
                                        {"jsonrpc": "2.0", "id": 2, "method": "GetTask",
                                         "params": {"id": "nope"}}])
        assert status == 200, answer
        by_id = {a["id"]: a for a in answer}
        assert code(by_id[1]) == -32600 and "on its own" in by_id[1]["error"]["message"]
        assert code(by_id[2]) == -32001


async def test_notifications_get_no_answer(s: Stack) -> None:
    status, answer = await post(s, {"jsonrpc": "2.0", "method": "SendMessage",
                                    "params": {"message": MSG}})
    assert (status, answer) == (204, None)
    status, answer = await post(s, [{"jsonrpc": "2.0", "method": "GetTask",
                                     "params": {"id": "nope"}}])
    assert (status, answer) == (204, None)


async def test_list_response_always_has_next_page_token(s: Stack) -> None:
    _, answer = await post(s, {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}})
    assert answer["result"] == {"tasks": [], "nextPageToken": "", "pageSize": 50, "totalSize": 0}


async def test_internal_errors_have_a_fixed_message(stack: StackFactory) -> None:
    from a2a_grpc.core.errors import InternalError

    class Broken:
        def __getattr__(self, name: str) -> Any:
            async def fail(*args: Any) -> Any:
                raise RuntimeError("secret connection string")
            return fail

    s = await stack(service=Broken())
    _, answer = await post(s, {"jsonrpc": "2.0", "id": 1, "method": "GetTask",
                               "params": {"id": "x"}})
    assert answer["error"]["code"] == -32603
    assert answer["error"]["message"] == InternalError.default_message
    assert "secret" not in json.dumps(answer)


async def test_content_type_is_json(s: Stack) -> None:
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}) as resp:
        assert resp.content_type == "application/json"
    async with s.session.get(s.base_url + "/") as resp:
        assert resp.status == 405
        body = await resp.json()
        assert body["error"]["details"][0]["reason"] == "METHOD_NOT_FOUND"


async def test_session_survives_many_errors(s: Stack) -> None:
    async with aiohttp.ClientSession() as other:
        for _ in range(20):
            async with other.post(s.base_url + "/", data=b"{") as resp:
                assert resp.status == 200


@pytest.mark.parametrize("params", [
    {"id": "no-such-task"},  # refused by the handler
    {"id": 5, "unknownField": {"deep": []}, "historyLength": "x"},  # refused by the parser
])
async def test_a_stream_refused_before_its_first_event_is_a_plain_error(
        s: Stack, params: dict[str, object]) -> None:
    """As the official SDK's server answers, and the 1.0 conformance kit checks."""
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": "r1", "method": "SubscribeToTask", "params": params}) as resp:
        assert (resp.status, resp.content_type) == (200, "application/json")
        body = await resp.json()
    assert body["id"] == "r1" and body["jsonrpc"] == "2.0" and "result" not in body
    assert body["error"]["code"] in (-32001, -32602)


async def test_a_terminal_tasks_subscribe_is_refused_at_once(s: Stack) -> None:
    task = (await s.binding("jsonrpc").call(
        "SendMessage", pb.SendMessageRequest(message=pb.Message(
            message_id="done", role=pb.ROLE_USER, parts=[pb.Part(text="hi")]))))
    assert isinstance(task, pb.SendMessageResponse)
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": 7, "method": "SubscribeToTask",
            "params": {"id": task.task.id}}) as resp:
        assert resp.content_type == "application/json"
        body = await resp.json()
    assert body["error"]["code"] == -32004  # UnsupportedOperationError (spec §9.4.6)


async def test_the_03_stream_is_still_refused_as_a_stream_of_one_error(s: Stack) -> None:
    async with s.session.post(s.base_url + "/", json={
            "jsonrpc": "2.0", "id": "r3", "method": "tasks/resubscribe",
            "params": {"id": "no-such-task"}}) as resp:
        assert (resp.status, resp.content_type) == (200, "text/event-stream")
        events, _ = parse_sse(await resp.text())
    assert len(events) == 1 and events[0].data["error"]["code"] == -32001
