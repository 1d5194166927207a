"""Our client and CLI against a server we did not write: the official a2a-sdk's
reference server (its own virtualenv, a subprocess), over all three bindings it
offers (JSON-RPC and REST on Starlette, gRPC through the SDK's GrpcHandler)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.errors import (
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.generated import a2a_pb2 as pb
from tests.processes import LISTENING, ROOT

PEERS = Path(__file__).parent / "peers"
pytestmark = pytest.mark.interop


@pytest.fixture
async def sdk_server(sdk_python: Path) -> AsyncIterator[str]:
    proc = await asyncio.create_subprocess_exec(
        str(sdk_python), str(PEERS / "sdk_server.py"), "0", "0",
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT)
    try:
        assert proc.stdout is not None
        seen = b""
        async with asyncio.timeout(60):  # it binds port 0 and says what it got
            while not (found := LISTENING.search(line := (await proc.stdout.readline()).decode())):
                seen += line.encode()
                if not line:
                    raise AssertionError(f"the SDK server did not start: {seen.decode()}")
        base = f"http://127.0.0.1:{found.group(2)}"
        async with aiohttp.ClientSession() as session, session.get(
                base + "/.well-known/agent-card.json") as resp:
            assert resp.status == 200
        yield base
    finally:
        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 20)


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON", "GRPC"])
async def test_our_client_against_the_sdk_server(sdk_server: str, binding: str) -> None:
    async with await A2AClient.connect(sdk_server, ClientOptions(prefer=[binding])) as c:
        assert c.card.name == "SDK reference agent"
        task = (await c.send_text("hello")).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        assert task.artifacts[0].parts[0].text == "echo: hello"
        events = [e async for e in c.stream_text("stream 3")]
        chunks = [e.artifact_update.artifact.parts[0].text for e in events
                  if e.HasField("artifact_update")]
        assert chunks == ["chunk 1/3", "chunk 2/3", "chunk 3/3"]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        got = await c.get_task(pb.GetTaskRequest(id=task.id))
        assert got.id == task.id
        listed = await c.list_tasks(pb.ListTasksRequest())
        assert listed.total_size == 2
        with pytest.raises(TaskNotFoundError):
            await c.get_task(pb.GetTaskRequest(id="no-such-task"))
        with pytest.raises(TaskNotCancelableError):
            await c.cancel_task(pb.CancelTaskRequest(id=task.id))
        with pytest.raises(UnsupportedOperationError):
            async for _ in c.subscribe_to_task(pb.SubscribeToTaskRequest(id=task.id)):
                pass


@pytest.mark.parametrize("binding", ["jsonrpc", "rest", "grpc"])
async def test_our_cli_against_the_sdk_server(sdk_server: str, binding: str) -> None:
    async def cli(*args: str) -> tuple[int, str]:
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "a2a_grpc", *args, "--binding", binding, cwd=ROOT,
            env={**os.environ}, stdout=asyncio.subprocess.PIPE)
        out, _ = await asyncio.wait_for(proc.communicate(), 60)
        return proc.returncode or 0, out.decode()

    code, out = await cli("send", sdk_server, "hi there")
    assert code == 0 and "echo: hi there" in out
    code, out = await cli("stream", sdk_server, "stream 2", "--json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert code == 0 and lines[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
    code, out = await cli("list", sdk_server)
    assert code == 0 and "of 2 tasks" in out
