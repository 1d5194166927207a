"""Gateway mode beyond the parity list: the CLI, and an upstream that is down."""

from __future__ import annotations

import asyncio
import json
import signal
from pathlib import Path

import aiohttp
import pytest
from aiohttp.test_utils import TestServer

from a2a_grpc.bridge import create_app
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.grpc_edge.upstream import UpstreamService
from tests.bindings import parse_sse
from tests.conftest import GatewayFactory
from tests.processes import reap, start_server, unused_port


async def test_unreachable_upstream_is_503_and_says_so() -> None:
    upstream = UpstreamService(f"127.0.0.1:{unused_port()}")  # nothing listens there
    http = TestServer(create_app(upstream, pb.AgentCard(name="gw")), host="127.0.0.1")
    await http.start_server()
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(http.make_url("/tasks/x")) as resp:
                body = await resp.json()
            assert resp.status == 503
            assert body["error"]["status"] == "UNAVAILABLE"
            assert "unavailable" in body["error"]["message"]
            async with session.post(http.make_url("/"), json={
                    "jsonrpc": "2.0", "id": 1, "method": "GetTask", "params": {"id": "x"}}
                    ) as resp:
                answer = await resp.json()
            assert answer["error"]["code"] == -32000
    finally:
        await http.close()
        await upstream.close()


async def test_bridge_command_in_front_of_a_server_process(tmp_path: Path) -> None:
    upstream = await start_server("serve")
    card_file = tmp_path / "card.json"
    card_file.write_text(json.dumps({
        "name": "Fronted agent", "description": "behind a gateway", "version": "2.0",
        "capabilities": {"streaming": True}, "someFutureField": 1}))
    front = await start_server("bridge", "--upstream", upstream.target, "--card", str(card_file))
    server, gw, base = upstream.proc, front.proc, front.url
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            assert card["name"] == "Fronted agent"
            assert [i["protocolBinding"] for i in card["supportedInterfaces"]] == [
                "JSONRPC", "HTTP+JSON"]
            async with session.post(base + "/message:stream", json={"message": {
                    "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "stream 2"}]}}
                    ) as resp:
                text = await resp.text()
            assert text.count("artifactUpdate") == 2 and "TASK_STATE_COMPLETED" in text
            assert "id: 1\n" in text  # the upstream's sequence numbers, passed through
            async with session.post(base + "/tasks/nope:cancel") as resp:
                body = await resp.json()
            assert resp.status == 404
            assert body["error"]["details"][0]["reason"] == "TASK_NOT_FOUND"
    finally:
        for proc in (gw, server):
            proc.send_signal(signal.SIGTERM)
        codes = [await asyncio.to_thread(p.wait, 15) for p in (gw, server)]
        for proc in (gw, server):
            reap(proc)
    assert codes == [0, 0]


async def test_the_gateway_drains_without_closing_a_connection_under_a_request() -> None:
    """SIGTERM to `a2a-grpc bridge`: a client that kept its connection alive is
    still answered on it, the answer says `Connection: close`, and once no
    connection is left the gateway exits at once (well before its grace)."""
    upstream = await start_server("serve")
    front = await start_server("bridge", "--upstream", upstream.target, "--grace", "30")
    body = {"message": {"messageId": "d1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    try:
        connector = aiohttp.TCPConnector(limit=1)  # one connection, kept alive
        async with aiohttp.ClientSession(connector=connector) as session:
            async with session.post(front.url + "/message:send", json=body) as resp:
                assert resp.status == 200 and resp.headers.get("Connection") != "close"
                await resp.read()
            front.proc.send_signal(signal.SIGTERM)
            await front.logged("shutting down")
            body["message"]["messageId"] = "d2"
            async with session.post(front.url + "/message:send", json=body) as resp:
                answer = await resp.json()
                assert resp.status == 200 and resp.headers["Connection"] == "close"
            assert answer["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        started = asyncio.get_running_loop().time()
        assert await asyncio.to_thread(front.proc.wait, 15) == 0
        assert asyncio.get_running_loop().time() - started < 10
        assert "drained" in front.log() and "Traceback" not in front.log()
    finally:
        reap(front.proc)
        reap(upstream.proc)


async def test_resume_through_the_gateway(gateway: GatewayFactory) -> None:
    g = await gateway()
    async with g.session.post(g.base_url + "/message:stream", json={"message": {
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "stream 20"}]}}) as resp:
        head = b"".join([await resp.content.readuntil(b"\n\n") for _ in range(8)])
    seen, _ = parse_sse(head.decode())
    assert [e.id for e in seen] == [str(i) for i in range(1, 9)]  # the upstream's numbers
    task_id = seen[0].data["task"]["id"]
    async with g.session.get(f"{g.base_url}/tasks/{task_id}:subscribe",
                             headers={"Last-Event-ID": seen[-1].id or ""}) as resp:
        rest, _ = parse_sse(await resp.text())
    assert [e.id for e in rest] == [str(i) for i in range(9, 9 + len(rest))]  # a replay
    assert not any("task" in e.data for e in rest)
    texts = [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"]
             for e in seen + rest if "artifactUpdate" in e.data]
    assert texts == [f"chunk {i}/20" for i in range(1, 21)]


async def test_the_gateway_passes_credentials_on(tmp_path: Path) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("alice:alice-key\n")
    secured = await start_server("serve", "--store", "memory", "--api-keys", str(keys),
                                 "--api-key-in", "query", "--api-key-name", "key")
    front = await start_server("bridge", "--upstream", secured.target, "--forward-header",
                               "key")
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(front.url + "/tasks") as resp:
                assert resp.status == 401  # the upstream's refusal, as HTTP
            async with session.get(front.url + "/tasks", params={"key": "wrong"}) as resp:
                assert resp.status == 401
            async with session.get(front.url + "/tasks", params={"key": "alice-key"}) as resp:
                assert resp.status == 200, await resp.text()
            async with session.post(front.url + "/message:send",
                                    headers={"Key": "alice-key"}, json={"message": {
                                        "messageId": "m1", "role": "ROLE_USER",
                                        "parts": [{"text": "whoami"}]}}) as resp:
                answer = await resp.json()
            assert answer["message"]["parts"][0]["text"] == "alice (by apiKey)"
    finally:
        reap(front.proc)
        reap(secured.proc)


async def test_the_gateway_names_the_extensions_its_upstream_activated(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from examples.hops_extension import HOPS

    monkeypatch.setenv("HOP_NAME", "behind")
    upstream = await start_server("serve", "--agent", "examples.hops_extension:Hops")
    front = await start_server("bridge", "--upstream", upstream.target)
    try:
        async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as session:
            for path in ("/message:send", "/message:stream"):
                for asked in ({"A2A-Extensions": HOPS}, {}):
                    async with session.post(front.url + path, headers=asked, json={"message": {
                            "messageId": f"m{path}{bool(asked)}", "role": "ROLE_USER",
                            "parts": [{"text": "hi"}]}}) as resp:
                        body = await resp.text()
                        assert resp.status == 200, body
                        assert resp.headers.get("A2A-Extensions") == (HOPS if asked else None)
                    # Not the resumable-streams extension the gateway asks for itself.
                    assert ("behind" in body) and (('"hops"' in body) == bool(asked))
    finally:
        reap(front.proc)
        reap(upstream.proc)
