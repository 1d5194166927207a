"""Two agents on one `serve` (`--host-agent NAME=...`): each card names its
own URLs, our client reaches each from its card or from the catalog on every
binding, a task of one is TaskNotFound on the other, a call naming no agent
or an unknown one is refused, 0.3's REST and the first draft's card work
under /NAME, and replicas on PostgreSQL and Redis serve both."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import TaskNotFoundError
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.carried import carriers
from tests.conftest import send_request
from tests.processes import ROOT, Server, reap, start_server
from tests.redis_bus import bus_url, drop_prefix, redis_prefix
from tests.stores import drop_schema, postgres_schema, postgres_url

HEADERS = {"A2A-Version": "1.0"}
AGENTS = ("--host-agent", "echo=demo", "--host-agent", "words=examples.word_count:WordCount")
ANSWERS = {"echo": "echo: hello there", "words": "2 words"}


@pytest.fixture(params=carriers())
async def hosting(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[Server]:
    """`serve` hosting both agents, on each gRPC carrier."""
    server = await start_server("serve", "--store", f"sqlite:///{tmp_path / 'tasks.db'}",
                                *AGENTS, "--grpc-carrier", request.param)
    try:
        yield server
    finally:
        reap(server.proc)


def message(text: str) -> dict[str, Any]:
    return {"message": {"messageId": uuid.uuid4().hex, "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


async def test_each_card_names_its_own_urls_and_the_catalog_lists_both(
        hosting: Server) -> None:
    base = hosting.url
    async with aiohttp.ClientSession() as http:
        async with http.get(base + "/.well-known/ai-catalog.json") as resp:
            assert resp.headers["Content-Type"].startswith("application/ai-catalog+json")
            catalog = await resp.json(content_type=None)
        cards = {}
        for name in ("echo", "words"):
            async with http.get(f"{base}/{name}/.well-known/agent-card.json") as resp:
                cards[name] = await resp.json()
        async with http.get(base + "/.well-known/agent-card.json") as resp:
            assert resp.status == 404
            assert "ai-catalog.json" in (await resp.json())["error"]["message"]
    assert catalog["specVersion"] == "1.0"
    assert [(e["identifier"], e["type"], e["url"]) for e in catalog["entries"]] == [
        (f"urn:air:127.0.0.1:a2a:{name}", "application/a2a-agent-card+json",
         f"{base}/{name}/.well-known/agent-card.json") for name in ("echo", "words")]
    assert cards["words"]["name"] == "Word counter"
    assert cards["echo"]["name"] == "a2a-grpc demo agent"
    for name, card in cards.items():
        urls = {(i["protocolBinding"], i["url"], i.get("tenant", ""))
                for i in card["supportedInterfaces"]}
        assert urls == {("GRPC", hosting.target, name), ("JSONRPC", f"{base}/{name}/", ""),
                        ("HTTP+JSON", f"{base}/{name}", "")}


async def test_the_log_says_what_is_served_and_where(hosting: Server,
                                                    tmp_path: Path) -> None:
    """On each carrier: every agent named, the store, the inspector's page."""
    await hosting.logged(f"the inspector: open {hosting.url}/inspector in a browser")
    await hosting.logged("A2A agents echo, words, each under /NAME")
    await hosting.logged(f"tasks in sqlite:///{tmp_path / 'tasks.db'}")


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_our_client_reaches_each_agent_and_only_its_own_tasks(
        hosting: Server, binding: str) -> None:
    clients = {name: await A2AClient.connect(f"{hosting.url}/{name}",
                                             ClientOptions(prefer=[binding]))
               for name in ("echo", "words")}
    # ... and from the catalog, by name.
    clients["words-by-catalog"] = await A2AClient.connect(
        hosting.url, ClientOptions(prefer=[binding], agent="words"))
    try:
        tasks = {}
        for name, client in clients.items():
            assert client.interface.protocol_binding == binding
            task = (await client.send_message(send_request("hello there"))).task
            tasks[name] = task.id
            assert task.artifacts[0].parts[0].text == ANSWERS[name.split("-")[0]]
        # A task id of one agent is unknown to the other.
        with pytest.raises(TaskNotFoundError):
            await clients["words"].get_task(pb.GetTaskRequest(id=tasks["echo"]))
        got = await clients["words-by-catalog"].get_task(pb.GetTaskRequest(id=tasks["words"]))
        assert got.id == tasks["words"]
        events = [e async for e in clients["echo"].send_streaming_message(
            send_request("stream 2"))]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        async with aiohttp.ClientSession() as http, http.get(hosting.url + "/metrics") as resp:
            metrics = await resp.text()
        for line in ('a2a_agent_calls_total{agent="words",method="GetTask",'
                     'outcome="TASK_NOT_FOUND"} 1.0',
                     'a2a_agent_calls_total{agent="words",method="SendMessage",outcome="OK"} 2.0',
                     'a2a_agent_calls_total{agent="echo",method="SendStreamingMessage",'
                     'outcome="OK"} 1.0'):
            assert line in metrics, metrics
    finally:
        for client in clients.values():
            await client.close()


async def test_grpc_without_an_agent_or_with_an_unknown_one_is_refused(hosting: Server) -> None:
    async with grpc.aio.insecure_channel(hosting.target) as channel:
        stub = A2AServiceStub(channel)
        for tenant in ("", "nobody"):
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await stub.SendMessage(pb.SendMessageRequest(
                    tenant=tenant, message=send_request("hi").message),
                    metadata=(("a2a-version", "1.0"),))
            assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            assert "echo, words" in (raised.value.details() or "")
        sent = await stub.SendMessage(pb.SendMessageRequest(
            tenant="words", message=send_request("one two three").message),
            metadata=(("a2a-version", "1.0"),))
        assert sent.task.artifacts[0].parts[0].text == "3 words"


async def test_an_unknown_name_in_the_url_is_refused_on_every_http_binding(
        hosting: Server) -> None:
    """An agent name no agent has is InvalidParams listing the agents, in each
    binding's own words (JSON-RPC at /NAME/ in every dialect, 1.0's and 0.3's
    REST), and its card is a 404 pointing to the catalog."""
    base = hosting.url
    async with aiohttp.ClientSession() as http:
        for method, params in (("SendMessage", message("hi")), ("GetTask", {"id": "x"}),
                               ("message/send", {"message": {
                                   "kind": "message", "messageId": "u03", "role": "user",
                                   "parts": [{"kind": "text", "text": "hi"}]}}),
                               ("tasks/send", {"id": "t01", "message": {
                                   "role": "user", "parts": [{"type": "text", "text": "hi"}]}})):
            async with http.post(f"{base}/nope/", json={"jsonrpc": "2.0", "id": 7,
                                                        "method": method,
                                                        "params": params}) as resp:
                assert resp.status == 200, await resp.text()
                body = await resp.json()
            assert body["id"] == 7 and body["error"]["code"] == -32602, body
            assert "'nope'" in body["error"]["message"]
            assert "echo, words" in body["error"]["message"]
        v03 = {"message": {"messageId": "u03r", "role": "ROLE_USER", "content": [{"text": "hi"}]}}
        async with http.post(base + "/nope/message:send", json=message("hi")) as resp:
            assert resp.status == 400
            assert "echo, words" in (await resp.json())["error"]["message"]
        async with http.post(base + "/nope/v1/message:send", json=v03) as resp:
            assert resp.status == 422  # 0.3's REST words for InvalidParams
            assert (await resp.json())["code"] == -32602
        for card in (".well-known/agent-card.json", ".well-known/agent.json", "v1/card"):
            async with http.get(f"{base}/nope/{card}") as resp:
                assert resp.status == 404
                text = (await resp.json())["error"]["message"]
            assert "'nope'" in text and "echo, words" in text and "ai-catalog.json" in text
        # the agents themselves are served as before
        async with http.get(f"{base}/echo/.well-known/agent-card.json") as resp:
            assert resp.status == 200


async def test_a_url_and_a_tenant_naming_two_agents_are_refused(hosting: Server) -> None:
    async with aiohttp.ClientSession(headers=HEADERS) as http, http.post(
            hosting.url + "/echo/", json={"jsonrpc": "2.0", "id": 1, "method": "SendMessage",
                                          "params": {"tenant": "words", **message("x")}}) as resp:
        body = await resp.json()
    assert body["error"]["code"] == -32602
    assert "another agent" in body["error"]["message"]


async def test_earlier_dialects_under_the_agents_path(hosting: Server) -> None:
    base = hosting.url
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{base}/words/v1/message:send", json={"message": {
                "messageId": "m03", "role": "ROLE_USER",
                "content": [{"text": "a b c d"}]}}) as resp:
            v03 = await resp.json()
        async with http.post(f"{base}/echo/", json={
                "jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
                    "kind": "message", "messageId": "j03", "role": "user",
                    "parts": [{"kind": "text", "text": "hi"}]}}}) as resp:
            jsonrpc03 = await resp.json()
        async with http.get(f"{base}/words/.well-known/agent.json") as resp:
            draft_card = await resp.json()
    assert v03["task"]["artifacts"][0]["parts"][0]["text"] == "4 words"
    assert jsonrpc03["result"]["artifacts"][0]["parts"][0]["text"] == "echo: hi"
    assert draft_card["name"] == "Word counter"
    assert draft_card["url"] == f"{base}/words/"  # 0.3's fields name the agent's own URL


def test_the_cli_reaches_an_agent_through_the_catalog(hosting: Server) -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "send", hosting.url, "--agent",
                           "words", "--json", "one two"], cwd=ROOT, capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "2 words" in done.stdout


def test_the_cli_without_a_name_is_told_the_agents(hosting: Server) -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "send", hosting.url, "hi"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 4, done.stderr  # an A2A error's, as for an unknown --agent
    assert (f"{hosting.url} hosts several agents (echo, words): name one with --agent NAME "
            f"(ClientOptions(agent=NAME)), or call {hosting.url}/NAME") in done.stderr


def test_the_cli_names_the_agent_on_grpc_and_lists_names_for_an_unknown_one(
        hosting: Server) -> None:
    """`--agent NAME` on a grpc:// URL (no card to read there) names the agent,
    as on HTTP; an unknown one is told the agents' names, not the catalog's URNs."""
    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "a2a_grpc", *args], cwd=ROOT,
                              capture_output=True, text=True, timeout=60)

    target = f"grpc://127.0.0.1:{hosting.grpc_port}"
    sent = cli("send", target, "--agent", "words", "--json", "one two three")
    assert sent.returncode == 0 and "3 words" in sent.stdout, sent.stderr
    listed = cli("list", target, "--agent", "words", "--json")
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout.splitlines()[0])["totalSize"] >= 1, listed.stdout
    unknown = cli("send", hosting.url, "--agent", "nobody", "hi")
    assert unknown.returncode == 4, unknown.stderr
    assert f"no agent 'nobody' at {hosting.url} (it hosts echo, words)" in unknown.stderr
    assert "urn:" not in unknown.stderr


def test_bad_names_are_refused_at_start() -> None:
    for spec in ("v1=demo", "a b=demo", "nameonly"):
        done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--host-agent", spec,
                               "--store", "memory"], cwd=ROOT, capture_output=True, text=True,
                              timeout=60)
        assert done.returncode == 2 and "--host-agent" in done.stderr, (spec, done.stderr)


async def test_replicas_on_postgresql_and_redis_serve_both_agents() -> None:
    schema, prefix = await postgres_schema(), await redis_prefix()
    store, bus = postgres_url(schema), bus_url(prefix)
    servers = []
    try:
        for _ in range(2):
            servers.append(await start_server("serve", "--store", store, "--bus", bus, *AGENTS))
        a, b = servers
        async with aiohttp.ClientSession(headers=HEADERS) as http:
            # echo's task runs on replica a; b follows it to its end, as echo's.
            async with http.post(f"{a.url}/echo/message:send", json={
                    **message("slow 1"), "configuration": {"returnImmediately": True}}) as resp:
                echo_task = (await resp.json())["task"]["id"]
            async with http.post(f"{b.url}/echo/tasks/{echo_task}:subscribe") as resp:
                assert "TASK_STATE_COMPLETED" in await resp.text()
            # words' task, sent to b, is read on a.
            async with http.post(f"{b.url}/words/message:send",
                                 json=message("hello there")) as resp:
                words_task = (await resp.json())["task"]["id"]
            async with http.get(f"{a.url}/words/tasks/{words_task}") as resp:
                assert (await resp.json())["artifacts"][0]["parts"][0]["text"] == "2 words"
            for name, task_id in (("words", echo_task), ("echo", words_task)):
                for server in (a, b):
                    async with http.get(f"{server.url}/{name}/tasks/{task_id}") as resp:
                        assert resp.status == 404
    finally:
        for server in servers:
            reap(server.proc)
        await drop_prefix(prefix)
        await drop_schema(schema)
