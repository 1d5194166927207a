"""`a2a-grpc serve` as a user runs it: a real process, real signals."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request
from tests.processes import ROOT, Server, reap, spawn, start_server, wait_serving


@pytest.fixture(params=[("uvloop", "grpc.aio"), ("asyncio", "grpc.aio"),
                        pytest.param(("uvloop", "pyvoy"), id="uvloop-pyvoy")])
async def server(request: pytest.FixtureRequest) -> AsyncIterator[tuple[Server, str]]:
    loop, carrier = request.param
    if carrier == "pyvoy":
        pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
    s = await start_server("serve", "--grace", "2", "--loop", loop, "--grpc-carrier", carrier)
    yield s, loop
    reap(s.proc)


async def test_serve_answers_and_stops_cleanly_on_sigterm(server: tuple[Server, str]) -> None:
    s, loop = server
    proc, port = s.proc, s.grpc_port
    channel = await wait_serving(port, proc)
    stub = A2AServiceStub(channel)
    resp = await stub.SendMessage(send_request("hi from a subprocess"))
    assert resp.task.artifacts[0].parts[0].text == "echo: hi from a subprocess"
    slow = stub.SendStreamingMessage(send_request("slow 60"))
    await slow.read()  # a stream is open while we ask the server to stop
    proc.send_signal(signal.SIGTERM)
    started = time.monotonic()
    code = await asyncio.to_thread(proc.wait, 15)
    assert code == 0
    assert time.monotonic() - started < 10
    out = s.log()
    assert f"127.0.0.1:{port}" in out and "stopped" in out
    assert f"event loop: {loop}" in out
    await channel.close()


def test_bad_agent_spec_is_a_usage_error() -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--agent", "nope"],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert "MODULE:ATTR" in done.stderr
    for spec, says in [("json:JSONDecoder", "not an a2a_grpc.AgentExecutor"),
                       ("json:dumps", "cannot create agent"), ("no_such_mod:X", "cannot load")]:
        done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--agent", spec],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 2 and says in done.stderr, done.stderr


@pytest.mark.parametrize("flags", [("--store", "memory"),
                                   ("--store", "memory", "--grpc-carrier", "pyvoy"),
                                   ("--workers", "2", "--store", "sqlite:///STORE")])
def test_port_in_use_says_what_to_do(flags: tuple[str, ...], tmp_path: Path) -> None:
    """The port is named, and what to do: another port (not the store)."""
    if "pyvoy" in flags:
        pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "a2a_grpc", "serve", "--grpc-port", str(port),
             *(f.replace("STORE", str(tmp_path / "tasks.db")) for f in flags)],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert f"127.0.0.1:{port}" in done.stderr and "--grpc-port" in done.stderr, done.stderr
    assert "check --store" not in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == []  # said before any store file is made
    assert "add_port" not in done.stderr, done.stderr  # gRPC core's own line, before ours


@pytest.mark.parametrize("flags", [(), ("--grpc-carrier", "pyvoy"),
                                   ("--workers", "2", "--store", "sqlite:///STORE")])
def test_agent_beside_host_agent_is_refused(flags: tuple[str, ...], tmp_path: Path) -> None:
    """Which agent would /.well-known/agent-card.json be? Refused before anything
    starts, on every carrier and under --workers, saying what to write instead."""
    done = subprocess.run(
        [sys.executable, "-m", "a2a_grpc", "serve", "--grpc-port", "0", "--http-port", "0",
         "--agent", "examples.word_count:WordCount",
         "--host-agent", "words=examples.word_count:WordCount",
         *(f.replace("STORE", str(tmp_path / "tasks.db")) for f in flags)],
        cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "name every agent with --host-agent NAME=MODULE:ATTR" in done.stderr, done.stderr


async def test_the_readme_example_agent_serves() -> None:
    s = await start_server("serve", "--agent", "examples.word_count:WordCount")
    proc, port = s.proc, s.grpc_port
    try:
        channel = await wait_serving(port, proc)
        stub = A2AServiceStub(channel)
        task = (await stub.SendMessage(send_request("one two three"))).task
        assert task.artifacts[0].parts[0].text == "3 words"
        empty = (await stub.SendMessage(send_request("   "))).task
        assert empty.status.state == pb.TASK_STATE_REJECTED
        await channel.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 15)
        reap(proc)
    assert code == 0


async def test_serve_offers_all_three_bindings_in_its_card() -> None:
    s = await start_server("serve", "--public-url", "https://agents.example.com/demo/")
    proc, grpc_port, base = s.proc, s.grpc_port, s.url
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            assert [(i["protocolBinding"], i["url"], i["protocolVersion"])
                    for i in card["supportedInterfaces"]] == [
                ("GRPC", f"127.0.0.1:{grpc_port}", "1.0"),  # AgentInterface.url: host:port
                ("JSONRPC", "https://agents.example.com/demo/", "1.0"),
                ("HTTP+JSON", "https://agents.example.com/demo", "1.0"),
            ]
            caps = card["capabilities"]
            assert (caps["streaming"], caps["pushNotifications"]) == (True, True)
            assert [x["uri"] for x in caps["extensions"]] == [
                "urn:a2a-grpc:extension:resumable-streams:v2"]
            assert caps["extendedAgentCard"] is True  # the demo tailors one per caller
            async with session.post(base + "/", json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                        "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hey"}]}}}
                    ) as resp:
                answer = await resp.json()
            assert answer["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "echo: hey"
        # The card's gRPC address is what a stub dials, as it is.
        async with grpc.aio.insecure_channel(card["supportedInterfaces"][0]["url"]) as channel:
            task = (await A2AServiceStub(channel).SendMessage(send_request("dialed"))).task
        assert task.artifacts[0].parts[0].text == "echo: dialed"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 15)
        reap(proc)
    assert code == 0


async def card_of(url: str) -> dict[str, Any]:
    async with aiohttp.ClientSession() as session, session.get(
            url + "/.well-known/agent-card.json") as resp:
        card: dict[str, Any] = await resp.json()
        return card


async def test_a_wildcard_bind_is_never_advertised() -> None:
    s = await start_server("serve", "--host", "0.0.0.0")
    try:
        card = await card_of(s.url)
        urls = [i["url"] for i in card["supportedInterfaces"]]
        name = socket.getfqdn()
        assert urls == [f"{name}:{s.grpc_port}", f"http://{name}:{s.http_port}/",
                        f"http://{name}:{s.http_port}"]
        assert not any("0.0.0.0" in u for u in urls)
        assert await s.stop() == 0
        assert "--grpc-public-address" in s.log() and f"GRPC {name}:{s.grpc_port}" in s.log()
    finally:
        reap(s.proc)


async def test_the_grpc_address_clients_use_is_advertised_as_given() -> None:
    s = await start_server("serve", "--grpc-public-address", "agents.example.com:443")
    try:
        card = await card_of(s.url)
        assert card["supportedInterfaces"][0] == {
            "url": "agents.example.com:443", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
    finally:
        reap(s.proc)


@pytest.mark.parametrize("bad", ["agents.example.com", "0.0.0.0:50051", "ftp://x:1", ":80"])
def test_a_bad_grpc_public_address_is_a_usage_error(bad: str) -> None:
    done = subprocess.run([sys.executable, "-m", "a2a_grpc", "serve", "--store", "memory",
                           "--grpc-public-address", bad],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert (done.returncode == 2 and "host:port" in done.stderr) or "wildcard" in done.stderr


async def test_the_background_jobs_example_finishes_handed_off_tasks(tmp_path: Path) -> None:
    s = await start_server("serve", "--agent", "examples.background_jobs:BackgroundJobs",
                           "--store", f"sqlite:///{tmp_path / 't.db'}")
    try:
        channel = await wait_serving(s.grpc_port, s.proc)
        stub = A2AServiceStub(channel)
        sent = (await stub.SendMessage(send_request("later"))).task
        assert sent.status.state == pb.TASK_STATE_WORKING  # answered at once, handed off
        stream = [e async for e in stub.SendStreamingMessage(send_request("streamed"))]
        assert [e.WhichOneof("payload") for e in stream] == ["task", "status_update"]
        watched = [e async for e in stub.SubscribeToTask(
            pb.SubscribeToTaskRequest(id=stream[0].task.id))]
        assert watched[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        assert watched[-2].artifact_update.artifact.parts[0].text == "STREAMED"
        done = await stub.GetTask(pb.GetTaskRequest(id=sent.id))
        assert done.status.state == pb.TASK_STATE_COMPLETED  # the queue took it in order
        assert done.artifacts[0].parts[0].text == "LATER"
        await channel.close()
    finally:
        reap(s.proc)


@pytest.mark.parametrize("flags", [("--http-port", "99999"), ("--grpc-port", "70000"),
                                   ("--http-port", "-5")])
def test_a_port_out_of_range_is_refused_not_wrapped(flags: tuple[str, str]) -> None:
    proc = spawn("serve", "--store", "memory", *flags)
    out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 2, out
    assert "is not a TCP port (0 to 65535)" in out and "listening" not in out
