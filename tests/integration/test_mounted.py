"""The agent mounted under /a2a in a FastAPI app of its own middleware
(examples/mount_fastapi.py), in a real uvicorn or hypercorn process: every
call goes through the host's middleware; streams resume by Last-Event-ID on
both HTTP bindings; a dropped stream loses nothing; the host's
authentication scopes tasks; gRPC is reached from the card; and the app
says what to do when its lifespan was never run."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import httpx
import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import UnauthenticatedError
from a2a_grpc.demos.demo import DemoAgent
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.mount import A2AApp, ServeSettings, Store
from tests.bindings import parse_sse
from tests.conftest import send_request
from tests.processes import Server, mounted_app, reap

HEADERS = {"A2A-Version": "1.0"}


def message(text: str, **extra: Any) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}], **extra}}


@pytest.fixture(params=["uvicorn", "hypercorn"])
async def host(request: pytest.FixtureRequest, tmp_path: Path,
               monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Server]:
    server = await mounted_app(tmp_path, monkeypatch, request.param)
    try:
        yield server
    finally:
        reap(server.proc)


async def seen_by_host(server: Server) -> list[str]:
    async with aiohttp.ClientSession() as http, \
            http.get(f"http://127.0.0.1:{server.http_port}/seen") as resp:
        seen: list[str] = await resp.json()
    return seen[:-1]  # less this /seen


async def test_the_host_middleware_sees_and_marks_every_call(host: Server) -> None:
    base = host.url
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        answers = []
        async with http.get(base + "/.well-known/agent-card.json") as resp:
            card = await resp.json()
            answers.append(resp)
        async with http.post(base + "/", json={"jsonrpc": "2.0", "id": 1,
                                               "method": "SendMessage",
                                               "params": message("hello")}) as resp:
            task = (await resp.json())["result"]["task"]
            answers.append(resp)
        async with http.get(f"{base}/tasks/{task['id']}") as resp:
            assert (await resp.json())["id"] == task["id"]
            answers.append(resp)
        async with http.post(base + "/message:stream", json=message("stream 2")) as resp:
            events, _ = parse_sse(await resp.text())
            answers.append(resp)
        async with http.get(base + "/tasks/no-such-task") as resp:
            assert resp.status == 404
            assert (await resp.json())["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
            answers.append(resp)
        async with http.put(base + "/message:send") as resp:
            assert resp.status == 405
            answers.append(resp)
        async with http.get(base + "/no/such/path") as resp:
            assert resp.status == 404
            answers.append(resp)
    assert [r.headers.get("X-Host-App") for r in answers] == ["seen"] * len(answers)
    # The card names where the client reached the app: under the mount.
    urls = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert urls["JSONRPC"] == base + "/" and urls["HTTP+JSON"] == base
    assert urls["GRPC"] == f"127.0.0.1:{host.grpc_port}"
    assert [e.data.get("statusUpdate", {}).get("status", {}).get("state") for e in events][-1] \
        == "TASK_STATE_COMPLETED"
    assert await seen_by_host(host) == [
        "GET /a2a/.well-known/agent-card.json", "POST /a2a/", f"GET /a2a/tasks/{task['id']}",
        "POST /a2a/message:stream", "GET /a2a/tasks/no-such-task", "PUT /a2a/message:send",
        "GET /a2a/no/such/path"]


@pytest.mark.parametrize("binding", ["rest", "jsonrpc"])
async def test_a_dropped_stream_resumes_with_last_event_id(host: Server, binding: str) -> None:
    base = host.url
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        async with http.post(base + "/message:stream", json=message("stream 30")) as resp:
            head = b"".join([await resp.content.readuntil(b"\n\n") for _ in range(8)])
        # The connection is dropped here, mid-stream; the task goes on.
        seen, _ = parse_sse(head.decode())
        task_id, last = seen[0].data["task"]["id"], seen[-1].id
        assert last is not None
        if binding == "rest":
            ctx = http.get(f"{base}/tasks/{task_id}:subscribe", headers={"Last-Event-ID": last})
        else:
            ctx = http.post(base + "/", headers={"Last-Event-ID": last}, json={
                "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask",
                "params": {"id": task_id}})
        async with ctx as resp:
            assert resp.headers["X-Host-App"] == "seen"
            rest, _ = parse_sse(await resp.text())
    data = [e.data for e in seen[:1]] + [
        e.data if binding == "rest" else e.data["result"] for e in rest]
    ids = [int(e.id) for e in seen + rest if e.id]
    assert ids == list(range(1, len(ids) + 1))  # each event once, in order
    rest_chunks = [d["artifactUpdate"]["artifact"]["parts"][0]["text"] for d in data[1:]
                   if "artifactUpdate" in d]
    seen_chunks = [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in seen
                   if "artifactUpdate" in e.data]
    assert seen_chunks + rest_chunks == [f"chunk {i}/30" for i in range(1, 31)]
    assert data[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"


async def test_the_host_identity_owns_the_tasks(host: Server) -> None:
    base = host.url
    async with aiohttp.ClientSession(headers=HEADERS) as http:
        async with http.post(base + "/message:send", json=message("hello"),
                             headers={"X-User": "alice"}) as resp:
            task_id = (await resp.json())["task"]["id"]
        async with http.get(f"{base}/tasks/{task_id}", headers={"X-User": "alice"}) as resp:
            assert resp.status == 200
        for other in ({"X-User": "bob"}, {}):
            async with http.get(f"{base}/tasks/{task_id}", headers=other) as resp:
                assert resp.status == 404, await resp.text()


async def test_grpc_needs_the_host_authentication(host: Server) -> None:
    """gRPC does not pass through the host's middleware: the example's
    grpc_identify gates it. Without the host's credential a call is refused
    (UNAUTHENTICATED, no task made); with it, the task is that user's on
    every binding."""
    anonymous = await A2AClient.connect(host.url, ClientOptions(prefer=["GRPC"]))
    alice = await A2AClient.connect(host.url, ClientOptions(prefer=["GRPC"],
                                                            headers={"X-User": "alice"}))
    try:
        assert anonymous.interface.protocol_binding == "GRPC"
        with pytest.raises(UnauthenticatedError, match="host app's authentication"):
            await anonymous.send_message(send_request("hello"))
        task = (await alice.send_message(send_request("hello"))).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        with pytest.raises(UnauthenticatedError):
            await anonymous.get_task(pb.GetTaskRequest(id=task.id))
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            for user, status in (("alice", 200), ("bob", 404)):
                async with http.get(f"{host.url}/tasks/{task.id}",
                                    headers={"X-User": user}) as resp:
                    assert resp.status == status, await resp.text()
    finally:
        await anonymous.close()
        await alice.close()


async def test_grpc_from_the_card_and_a_stream_the_client_left(host: Server) -> None:
    client = await A2AClient.connect(host.url, ClientOptions(prefer=["GRPC"],
                                                             headers={"X-User": "carol"}))
    try:
        assert client.interface.protocol_binding == "GRPC"
        task = (await client.send_message(send_request("hello"))).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        # A stream read in part, then left: the server keeps serving, the run ends.
        left = A2AClient.from_card(client.card, ClientOptions(prefer=["JSONRPC"],
                                                              headers={"X-User": "carol"}))
        async for event in left.send_streaming_message(send_request("stream 20")):
            started = event.task.id
            break
        await left.close()
        for _ in range(200):
            got = await client.get_task(pb.GetTaskRequest(id=started))
            if got.status.state == pb.TASK_STATE_COMPLETED:
                break
            await asyncio.sleep(0.05)
        assert got.status.state == pb.TASK_STATE_COMPLETED
    finally:
        await client.close()


async def test_not_started_says_what_to_do_and_the_lifespan_starts_it() -> None:
    a2a = A2AApp(DemoAgent(), ServeSettings(store=Store(url="memory")), grpc=False,
                 public_url="http://testserver")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=a2a),
                                 base_url="http://testserver") as http:
        resp = await http.get("/.well-known/agent-card.json")
        assert resp.status_code == 503
        assert "lifespan" in resp.text
        async with a2a.lifespan():
            resp = await http.post("/message:send", json=message("hello"), headers=HEADERS)
            assert resp.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
            card = (await http.get("/.well-known/agent-card.json")).json()
            assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == [
                "JSONRPC", "HTTP+JSON"]
            assert card["supportedInterfaces"][0]["url"] == "http://testserver/"
        resp = await http.get("/.well-known/agent-card.json")
        assert resp.status_code == 503  # stopped


async def test_several_agents_each_under_its_name_with_the_catalog(
        caplog: pytest.LogCaptureFixture) -> None:
    """A2AApp({name: agent}): each agent's card and calls under /NAME, a task
    of one not found through the other, the catalog listing both; the start's
    log line names them all."""
    from examples.word_count import WordCount

    caplog.set_level(logging.INFO, logger="a2a_grpc")
    a2a = A2AApp({"echo": DemoAgent(), "words": WordCount()},
                 ServeSettings(store=Store(url="memory")), grpc=False,
                 public_url="http://testserver/a2a")
    async with a2a.lifespan(), httpx.AsyncClient(
            transport=httpx.ASGITransport(app=a2a), base_url="http://testserver") as http:
        cards = {name: (await http.get(f"/{name}/.well-known/agent-card.json")).json()
                 for name in ("echo", "words")}
        assert [i["url"] for i in cards["words"]["supportedInterfaces"]] == [
            "http://testserver/a2a/words/", "http://testserver/a2a/words"]
        answers = {name: (await http.post(f"/{name}/", headers=HEADERS, json={
            "jsonrpc": "2.0", "id": 1, "method": "SendMessage",
            "params": message("hello there")})).json()["result"]["task"]
            for name in ("echo", "words")}
        assert answers["echo"]["artifacts"][0]["parts"][0]["text"] == "echo: hello there"
        assert answers["words"]["artifacts"][0]["parts"][0]["text"] == "2 words"
        other = (await http.get(f"/words/tasks/{answers['echo']['id']}", headers=HEADERS))
        assert other.status_code == 404  # the echo agent's task, asked of the other
        listed = (await http.get("/.well-known/ai-catalog.json")).json()
        assert [e["url"] for e in listed["entries"]] == [
            f"http://testserver/a2a/{name}/.well-known/agent-card.json"
            for name in ("echo", "words")]
        assert (await http.get("/.well-known/agent-card.json")).status_code == 404
    started = [r.getMessage() for r in caplog.records if "as an ASGI app" in r.getMessage()]
    assert started == ["A2A agents echo, words, each under /NAME, served as an ASGI app at "
                       "http://testserver/a2a; tasks in memory"]


def test_a_name_that_is_no_path_segment_is_refused() -> None:
    with pytest.raises(ValueError, match="a name must be"):
        A2AApp({"a/b": DemoAgent(), "metrics": DemoAgent()})
