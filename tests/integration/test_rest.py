"""The HTTP+JSON binding's own surface: routes, query parameters, bodies, errors."""

from __future__ import annotations

import json
import uuid
from typing import Any

import aiohttp
import pytest

from a2a_grpc.bridge import BridgeConfig
from tests.carried import carriers
from tests.conftest import Stack, StackFactory
from tests.processes import reap, start_server

MSG = {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hello"}]}


@pytest.fixture
async def s(stack: StackFactory) -> Stack:
    return await stack(config=BridgeConfig(max_body_bytes=64 * 1024, max_json_depth=20))


async def req(s: Stack, verb: str, path: str, body: Any = None, *, raw: bytes | None = None,
              params: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    data = raw if raw is not None else (json.dumps(body) if body is not None else None)
    async with s.session.request(verb, s.base_url + path, data=data, params=params,
                                 headers=headers) as resp:
        text = await resp.text()
        return resp.status, json.loads(text) if text else None


def reason(body: dict[str, Any]) -> str:
    err = body["error"]
    assert set(err) == {"code", "status", "message", "details"}
    return str(err["details"][0]["reason"])


async def send(s: Stack, text: str = "hello", **extra: Any) -> dict[str, Any]:
    status, body = await req(s, "POST", "/message:send", {"message": {
        **MSG, "messageId": str(uuid.uuid4()), "parts": [{"text": text}]}, **extra})
    assert status == 200, body
    return body["task"]  # type: ignore[no-any-return]


async def test_json_and_a2a_json_bodies_are_accepted(s: Stack) -> None:
    for ctype in ("application/json", "application/a2a+json", "text/plain"):
        status, body = await req(s, "POST", "/message:send", {"message": MSG},
                                 headers={"Content-Type": ctype})
        assert status == 200 and body["task"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_query_parameters_of_every_type(s: Stack) -> None:
    first = await send(s, "a")
    await send(s, "b")
    status, body = await req(s, "GET", "/tasks", params=[
        ("pageSize", "1"), ("includeArtifacts", "true"), ("historyLength", "0"),
        ("status", "TASK_STATE_COMPLETED"),
        ("statusTimestampAfter", first["status"]["timestamp"]), ("unknownParam", "x")])
    assert status == 200, body
    assert (len(body["tasks"]), body["totalSize"], body["pageSize"]) == (1, 2, 1)
    assert body["tasks"][0]["artifacts"] and "history" not in body["tasks"][0]
    assert body["nextPageToken"]
    status, body = await req(s, "GET", "/tasks", params={"status": "5"})  # enum number
    assert status == 200 and body["totalSize"] == 0


@pytest.mark.parametrize(("params", "field"), [
    ({"pageSize": "many"}, "pageSize"), ({"includeArtifacts": "maybe"}, "includeArtifacts"),
    ({"status": "completed"}, "status"), ({"status": "TASK_STATE_RUNNING"}, "status"),
    ({"statusTimestampAfter": "yesterday"}, "statusTimestampAfter"),
    ({"historyLength": "1.5"}, "historyLength"), ({"pageSize": "0"}, "pageSize"),
])
async def test_bad_query_parameters(s: Stack, params: dict[str, str], field: str) -> None:
    status, body = await req(s, "GET", "/tasks", params=params)
    assert (status, reason(body)) == (400, "INVALID_PARAMS"), body
    assert field in json.dumps(body)


async def test_path_values_win_over_the_body(s: Stack) -> None:
    task = await send(s)
    status, body = await req(s, "POST", f"/tasks/{task['id']}:cancel", {"id": "other"})
    assert (status, reason(body)) == (400, "TASK_NOT_CANCELABLE")  # it used the path's id


async def test_tenant_routes(s: Stack) -> None:
    status, body = await req(s, "POST", "/acme/message:send", {"message": MSG})
    assert status == 200
    task_id = body["task"]["id"]
    assert (await req(s, "GET", f"/acme/tasks/{task_id}"))[0] == 200
    status, body = await req(s, "GET", f"/tasks/{task_id}")
    assert (status, reason(body)) == (404, "TASK_NOT_FOUND")
    status, body = await req(s, "GET", "/acme/tasks")
    assert body["totalSize"] == 1


async def test_subscribe_answers_get_and_post(s: Stack) -> None:
    task = await send(s)
    for verb in ("GET", "POST"):
        status, body = await req(s, verb, f"/tasks/{task['id']}:subscribe")
        assert (status, reason(body)) == (400, "UNSUPPORTED_OPERATION")  # final task


async def test_unknown_routes_and_verbs(s: Stack) -> None:
    status, body = await req(s, "GET", "/tasks/a/b/c")
    assert (status, reason(body)) == (404, "METHOD_NOT_FOUND")
    status, body = await req(s, "PUT", "/message:send", {"message": MSG})
    assert (status, reason(body)) == (405, "METHOD_NOT_FOUND")
    status, body = await req(s, "POST", "/tasks/x:explode")
    assert (status, reason(body)) == (404, "METHOD_NOT_FOUND")


async def test_unmatched_answers_name_what_the_path_takes(s: Stack) -> None:
    status, body = await req(s, "PUT", "/message:send", {"message": MSG})
    assert body["error"]["message"] == "PUT is not allowed on /message:send; use POST"
    status, body = await req(s, "DELETE", "/.well-known/agent-card.json")
    assert status == 405
    assert body["error"]["message"].endswith("use GET, HEAD")
    status, body = await req(s, "PATCH", "/tasks/abc")  # GetTask's path takes GET only
    assert (status, body["error"]["message"]) == (
        405, "PATCH is not allowed on /tasks/abc; use GET, HEAD")
    status, body = await req(s, "GET", "/no/such/thing")
    assert (status, body["error"]["message"]) == (
        404, "no A2A operation at GET /no/such/thing")
    async with s.session.head(s.base_url + "/.well-known/agent-card.json") as resp:
        assert resp.status == 200  # the routes themselves are untouched
    async with s.session.head(s.base_url + "/nope") as resp:
        assert resp.status == 404


@pytest.mark.parametrize(("raw", "expected"), [
    (b"{oops", (400, "PARSE_ERROR")),
    (b"[1, 2]", (400, "INVALID_PARAMS")),
    (b'{"message": "hello"}', (400, "INVALID_PARAMS")),
    (b'{"message": {"messageId": "m", "role": "ROLE_USER", "parts": [{}]}}',
     (400, "INVALID_PARAMS")),
    (b'{"message": {"messageId": "m", "role": "user", "parts": [{"text": "x"}]}}',
     (400, "INVALID_PARAMS")),
    (b"{}", (400, "INVALID_PARAMS")),
])
async def test_bad_bodies(s: Stack, raw: bytes, expected: tuple[int, str]) -> None:
    status, body = await req(s, "POST", "/message:send", raw=raw)
    assert (status, reason(body)) == expected, body


async def test_body_limits(s: Stack) -> None:
    big = {"message": {**MSG, "parts": [{"text": "x" * 100_000}]}}
    status, body = await req(s, "POST", "/message:send", big)
    assert (status, reason(body)) == (413, "INVALID_REQUEST")
    deep: Any = 1
    for _ in range(40):
        deep = [deep]
    status, body = await req(s, "POST", "/message:send",
                             {"message": {**MSG, "metadata": {"x": deep}}})
    assert (status, reason(body)) == (400, "PARSE_ERROR")
    status, _ = await req(s, "POST", "/message:send", {"message": MSG})
    assert status == 200


async def test_delete_is_idempotent_and_empty_is_an_object(s: Stack) -> None:
    task = await send(s)
    status, made = await req(s, "POST", f"/tasks/{task['id']}/pushNotificationConfigs",
                             {"url": "https://hooks.example.com/x"})
    assert status == 200 and made["taskId"] == task["id"]
    for _ in range(2):
        status, body = await req(
            s, "DELETE", f"/tasks/{task['id']}/pushNotificationConfigs/{made['id']}")
        assert (status, body) == (200, {})


async def test_version_as_query_parameter(s: Stack) -> None:
    status, body = await req(s, "GET", "/tasks", params={"A2A-Version": "0.3"})
    assert (status, reason(body)) == (400, "VERSION_NOT_SUPPORTED")
    status, body = await req(s, "GET", "/tasks", params={"A2A-Version": "1.0"})
    assert status == 200


async def test_an_error_bodys_code_is_the_answers_status(s: Stack) -> None:
    """google.rpc.Status's `code` in the body says what the HTTP status says (a
    405 said 404 in its body, a 413 said 400), and a 405 names what is allowed."""
    big = {"message": {**MSG, "parts": [{"text": "x" * 100_000}]}}
    for verb, path, body in [("PUT", "/message:send", {"message": MSG}),
                             ("GET", "/no/such/thing", None), ("POST", "/message:send", big),
                             ("GET", "/tasks/nope", None)]:
        status, answer = await req(s, verb, path, body)
        assert answer["error"]["code"] == status, (verb, path, answer)
    async with s.session.put(s.base_url + "/message:send") as resp:
        assert (resp.status, resp.headers.get("Allow")) == (405, "POST")
    async with s.session.delete(s.base_url + "/.well-known/agent-card.json") as resp:
        assert (resp.status, resp.headers.get("Allow")) == (405, "GET, HEAD")


async def test_error_texts_speak_of_the_wire_not_of_python(s: Stack) -> None:
    """What does not fit is named as the wire names it: the package lf.a2a.v1 (not
    the module's), JSON's types and plain words (not int()'s or re's)."""
    cases = [
        ({"message": {**MSG, "role": "ROLE_BOSS"}},
         "Invalid enum value ROLE_BOSS for enum type lf.a2a.v1.Role"),
        ({"message": {**MSG, "messageId": 5}}, "expected a string, got a number"),
    ]
    for body, says in cases:
        status, answer = await req(s, "POST", "/message:send", body)
        message = answer["error"]["message"]
        assert status == 400 and says in message and "a2a_grpc" not in message, message
        assert not message.endswith(".."), message
    status, answer = await req(s, "GET", "/tasks", params={"pageSize": "abc"})
    assert status == 400 and "not an integer: 'abc'" in answer["error"]["message"], answer


@pytest.mark.parametrize("carrier", carriers())
async def test_a_long_url_is_answered_in_the_spec_shape(carrier: str) -> None:
    """A task id of 10,000 characters: aiohttp's own limit (8 KiB) answered it in
    plain text; up to Envoy's 60 KiB the app answers, on both carriers."""
    server = await start_server("serve", "--grpc-carrier", carrier)
    try:
        async with aiohttp.ClientSession() as http, http.get(
                f"{server.url}/tasks/{'a' * 10_000}", headers={"A2A-Version": "1.0"}) as resp:
            body = await resp.json(content_type=None)
        assert resp.status == 404 and body["error"]["code"] == 404, body
        assert body["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    finally:
        reap(server.proc)
