"""`a2a-grpc serve` as a user runs it: a real process, real signals."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from generated import a2a_pb2 as pb
from generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def spawn(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    return subprocess.Popen([sys.executable, "-m", "a2a_grpc", *args], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


@pytest.fixture
def server() -> Iterator[tuple[subprocess.Popen[str], int]]:
    port = free_port()
    proc = spawn("serve", "--grpc-port", str(port), "--grace", "2")
    yield proc, port
    reap(proc)


def reap(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()


async def wait_serving(port: int, proc: subprocess.Popen[str]) -> grpc.aio.Channel:
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    health = health_pb2_grpc.HealthStub(channel)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else "server exited"
        try:
            resp = await health.Check(health_pb2.HealthCheckRequest(), timeout=1)
            if resp.status == health_pb2.HealthCheckResponse.SERVING:
                return channel
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.1)
    raise AssertionError("server did not become healthy in 20 s")


async def test_serve_answers_and_stops_cleanly_on_sigterm(
    server: tuple[subprocess.Popen[str], int],
) -> None:
    proc, port = server
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
            [sys.executable, "-m", "a2a_grpc", "serve", "--grpc-port", str(port)],
            cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 1
    assert "--grpc-port" in done.stderr


async def test_the_readme_example_agent_serves() -> None:
    port = free_port()
    proc = spawn("serve", "--grpc-port", str(port), "--agent", "examples.word_count:WordCount")
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
