"""`a2a-grpc serve` as a user runs it: a real process, real signals."""

from __future__ import annotations

import asyncio
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import aiohttp
import pytest

from generated import a2a_pb2 as pb
from generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request
from tests.processes import ROOT, free_port, reap, spawn, wait_http, wait_serving


@pytest.fixture(params=["uvloop", "asyncio"])
def server(request: pytest.FixtureRequest) -> Iterator[tuple[subprocess.Popen[str], int, str]]:
    port = free_port()
    proc = spawn("serve", "--grpc-port", str(port), "--http-port", str(free_port()),
                 "--grace", "2", "--loop", request.param)
    yield proc, port, request.param
    reap(proc)


async def test_serve_answers_and_stops_cleanly_on_sigterm(
    server: tuple[subprocess.Popen[str], int, str],
) -> None:
    proc, port, loop = server
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
    out = proc.stdout.read() if proc.stdout else ""
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


def test_port_in_use_says_what_to_do() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [sys.executable, "-m", "a2a_grpc", "serve", "--grpc-port", str(port), "--store",
             "memory"],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "--grpc-port" in done.stderr


async def test_the_readme_example_agent_serves() -> None:
    port = free_port()
    proc = spawn("serve", "--grpc-port", str(port), "--http-port", str(free_port()),
                 "--agent", "examples.word_count:WordCount")
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
    grpc_port, http_port = free_port(), free_port()
    proc = spawn("serve", "--grpc-port", str(grpc_port), "--http-port", str(http_port),
                 "--public-url", "https://agents.example.com/demo/")
    try:
        channel = await wait_serving(grpc_port, proc)
        await channel.close()
        base = f"http://127.0.0.1:{http_port}"
        await wait_http(base, proc)
        async with aiohttp.ClientSession() as session:
            async with session.get(base + "/.well-known/agent-card.json") as resp:
                card = await resp.json()
            assert [(i["protocolBinding"], i["url"], i["protocolVersion"])
                    for i in card["supportedInterfaces"]] == [
                ("GRPC", f"grpc://127.0.0.1:{grpc_port}", "1.0"),
                ("JSONRPC", "https://agents.example.com/demo/", "1.0"),
                ("HTTP+JSON", "https://agents.example.com/demo", "1.0"),
            ]
            caps = card["capabilities"]
            assert (caps["streaming"], caps["pushNotifications"]) == (True, True)
            assert [x["uri"] for x in caps["extensions"]] == [
                "urn:a2a-grpc:extension:resumable-streams:v1"]
            assert "extendedAgentCard" not in caps
            async with session.post(base + "/", json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                        "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hey"}]}}}
                    ) as resp:
                answer = await resp.json()
            assert answer["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "echo: hey"
    finally:
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 15)
        reap(proc)
    assert code == 0
