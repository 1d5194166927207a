"""The API the inspector page calls (bridge/inspector/api.py), over real HTTP:
calls and streams through each binding with what went over the wire, the
card check, and what it refuses."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from a2a_grpc.bridge import create_app
from a2a_grpc.bridge.inspector.api import Inspector
from a2a_grpc.core.call import CallContext
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Stack, StackFactory


@pytest.fixture
async def page(stack: StackFactory) -> AsyncIterator[tuple[Stack, str, aiohttp.ClientSession]]:
    """A bridge app serving the inspector, whose card names `s`'s interfaces."""
    s = await stack()
    server = TestServer(create_app(s.handler, s.card(), inspector=Inspector()), host="127.0.0.1")
    await server.start_server()
    async with aiohttp.ClientSession() as session:
        yield s, str(server.make_url("")).rstrip("/"), session
    await server.close()


def send(text: str, message_id: str) -> dict[str, object]:
    return {"message": {"messageId": message_id, "role": "ROLE_USER", "parts": [{"text": text}]}}


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_calls_and_streams_go_through_the_chosen_binding(
        page: tuple[Stack, str, aiohttp.ClientSession], binding: str) -> None:
    s, base, session = page
    async with session.get(base + "/inspector") as resp:
        assert resp.status == 200 and "A2A inspector" in await resp.text()
    async with session.post(base + "/inspector/api/card", json={}) as resp:
        assert (await resp.json())["card"]["name"] == s.handler.card.name
    call = {"binding": binding, "method": "SendMessage", "params": send("hello", f"m-{binding}")}
    async with session.post(base + "/inspector/api/call", json=call) as resp:
        answer = await resp.json()
    task = answer["result"]["task"]
    assert task["status"]["state"] == "TASK_STATE_COMPLETED"
    [exchange] = answer["wire"]  # the one call, as it went
    if binding == "GRPC":
        assert exchange["request"]["method"] == "/lf.a2a.v1.A2AService/SendMessage"
        assert ["a2a-version", "1.0"] in exchange["request"]["metadata"]
        assert exchange["request"]["message"] == call["params"]
        assert exchange["response"]["message"]["task"] == task
        assert exchange["response"]["code"] == "OK"
    else:
        sent = json.loads(exchange["request"]["body"])
        assert (sent["params"] if binding == "JSONRPC" else sent) == call["params"]
        assert exchange["response"]["status"] == 200
        body = json.loads(exchange["response"]["body"])
        assert (body["result"] if binding == "JSONRPC" else body)["task"] == task
    assert 0 < exchange["answered"] <= exchange["ended"]
    stored = await s.handler.get_task(pb.GetTaskRequest(id=task["id"]), CallContext())
    assert stored.id == task["id"]  # the call reached the agent behind the card
    stream = {"binding": binding, "method": "SendStreamingMessage",
              "params": send("stream 3", f"s-{binding}")}
    async with session.post(base + "/inspector/api/stream", json=stream) as resp:
        assert resp.headers["Content-Type"] == "text/event-stream"
        text = await resp.text()
    blocks = [b for b in text.split("\n\n") if b]
    assert blocks[-1].startswith("event: end")
    events = [json.loads(b.removeprefix("data: ")) for b in blocks if b.startswith("data: ")]
    frames: list[dict[str, object]] = []  # the wire updates, in order, add up to every frame
    for update in (json.loads(b.removeprefix("event: wire\ndata: ")) for b in blocks
                   if b.startswith("event: wire")):
        assert update["framesFrom"] == len(frames)
        frames += update["frames"]
    if binding == "GRPC":
        assert [f["message"] for f in frames] == events
    else:
        data = [json.loads(line.removeprefix("data: ")) for f in frames
                for line in str(f["raw"]).splitlines() if line.startswith("data: ")]
        assert [d["result"] for d in data] == events if binding == "JSONRPC" else data == events
    chunks = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events
              if "artifactUpdate" in e]
    assert chunks == ["chunk 1/3", "chunk 2/3", "chunk 3/3"]
    assert events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_errors_and_refusals(page: tuple[Stack, str, aiohttp.ClientSession]) -> None:
    _, base, session = page
    api = base + "/inspector/api/"
    missing = {"binding": "GRPC", "method": "GetTask", "params": {"id": "nope"}}
    async with session.post(api + "call", json=missing) as resp:
        assert (await resp.json())["error"]["reason"] == "TASK_NOT_FOUND"
    bad = [(api + "call", b"not json", 400), (api + "call", b'{"method": "Nope"}', 400),
           (api + "call", b'{"method": "GetTask", "binding": "SOAP"}', 400),
           (api + "call", b'{"method": "SendStreamingMessage"}', 400),
           (api + "stream", b'{"method": "GetTask"}', 400),
           (api + "call", b'{"method": "GetTask", "params": {"id": 7, "bogus": 1}}', 400),
           (api + "stream", b'{"method": "SubscribeToTask", "params": {"nope": 1}}', 400)]
    for url, body, status in bad:
        async with session.post(url, data=body) as resp:
            assert resp.status == status, (url, body, await resp.text())
    stream_error = {"binding": "JSONRPC", "method": "SubscribeToTask", "params": {"id": "nope"}}
    async with session.post(api + "stream", json=stream_error) as resp:
        text = await resp.text()
    assert text.startswith("event: wire")  # the exchange that failed, then the error
    assert "event: error" in text and "TASK_NOT_FOUND" in text
    # another agent, for a browser behind a proxy (not on this machine): refused
    elsewhere = {"target": "http://127.0.0.1:9", "method": "GetTask", "params": {"id": "x"}}
    async with session.post(api + "call", json=elsewhere,
                            headers={"X-Forwarded-For": "203.0.113.9"}) as resp:
        assert resp.status == 403 and "inspector-remote-targets" in await resp.text()
    async with session.post(api + "call", json=elsewhere) as resp:  # this machine: tried
        answer = await resp.json()
    assert answer["error"]["reason"] == "AgentUnreachableError"
    [tried] = answer["wire"]  # the card fetch, and how it failed
    assert tried["request"]["url"] == "http://127.0.0.1:9/.well-known/agent-card.json"
    assert "ClientConnectorError" in tried["error"] and tried["response"] == {}
    for path in ("/inspector/index.py", "/inspector/..%2Finspector.py"):
        async with session.get(base + path) as resp:
            assert resp.status == 404


async def test_no_inspector_unless_asked(stack: StackFactory) -> None:
    s = await stack()  # create_app without an Inspector, as `serve --no-inspector`
    async with s.session.get(s.base_url + "/inspector") as resp:
        assert resp.status == 404


async def test_the_card_check(page: tuple[Stack, str, aiohttp.ClientSession]) -> None:
    _, base, session = page
    async with session.post(base + "/inspector/api/card", json={}) as resp:
        answer = await resp.json()
    # every interface probed (GetTask of an unknown id) and found speaking A2A
    assert [f["level"] for f in answer["findings"]] == ["info"] * 3
    assert all("answers A2A" in f["message"] for f in answer["findings"])
    assert sorted(x["binding"] for x in answer["wire"]) == ["GRPC", "HTTP", "HTTP"]
    # a target that is not an agent: the fetch is in the wire, the error says so
    async with session.post(base + "/inspector/api/card",
                            json={"target": base + "/inspector"}) as resp:
        answer = await resp.json()
    assert answer["error"]["reason"] == "BadResponseError"
    assert answer["wire"][0]["response"]["status"] == 404


async def test_a_card_whose_urls_no_client_can_call_still_gets_its_findings(
        page: tuple[Stack, str, aiohttp.ClientSession]) -> None:
    _, base, session = page
    card = {"name": "odd", "description": "d", "version": "1", "capabilities": {},
            "defaultInputModes": ["text/plain"], "defaultOutputModes": ["text/plain"],
            "skills": [{"id": "a", "name": "A", "description": "d", "tags": ["t"]}],
            "supportedInterfaces": [
                {"url": "not a url", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
                {"url": "::::", "protocolBinding": "GRPC", "protocolVersion": "1.0"}]}

    async def serve_card(_: web.Request) -> web.Response:
        return web.json_response(card)

    app = web.Application()
    app.router.add_get("/.well-known/agent-card.json", serve_card)
    odd = TestServer(app, host="127.0.0.1")
    await odd.start_server()
    try:
        async with session.post(base + "/inspector/api/card",
                                json={"target": str(odd.make_url("")).rstrip("/")}) as resp:
            assert resp.status == 200
            answer = await resp.json()
    finally:
        await odd.close()
    assert "error" not in answer, answer
    errors = {f["where"]: f["message"] for f in answer["findings"] if f["level"] == "error"}
    assert "absolute http(s) URL" in errors["supportedInterfaces[0].url"]
    assert "cannot be called" in errors["supportedInterfaces[0]"]
    assert "supportedInterfaces[1]" in errors  # probed, and found wanting
