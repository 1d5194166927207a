"""gRPC carried by the host's own server (A2AApp(grpc="carried"), under
pyvoy): each call passes the host's middleware, and the app's `identify`
names its caller as it names an HTTP call's, so a task made over gRPC is
its user's on every binding (tests/carried_host.py is the host)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request

pyvoy = pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")


def as_user(user: str | None) -> tuple[tuple[str, str], ...]:
    return (("a2a-version", "1.0"),) + ((("x-user", user),) if user else ())


@pytest.fixture
async def port() -> AsyncIterator[int]:
    server = pyvoy.PyvoyServer("tests.carried_host:app", lifespan=True, worker_threads=1,
                               stdout=None, stderr=None)
    async with server:
        yield server.listener_port


async def test_a_carried_call_is_the_caller_the_host_identified(port: int) -> None:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = A2AServiceStub(channel)
        task = (await stub.SendMessage(send_request("hello"), metadata=as_user("alice"))).task
        assert task.status.state == pb.TASK_STATE_COMPLETED
        got = await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=as_user("alice"))
        assert got.id == task.id
        for other in ("bob", None):  # another user's, or nobody's: not theirs to see
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.GetTask(pb.GetTaskRequest(id=task.id), metadata=as_user(other))
            assert refused.value.code() == grpc.StatusCode.NOT_FOUND
        # A stream carries the caller too: its task is bob's, not alice's.
        events = [e async for e in stub.SendStreamingMessage(send_request("stream 2"),
                                                             metadata=as_user("bob"))]
        streamed = events[0].task.id
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await stub.GetTask(pb.GetTaskRequest(id=streamed), metadata=as_user("alice"))
        assert refused.value.code() == grpc.StatusCode.NOT_FOUND
    async with aiohttp.ClientSession(headers={"A2A-Version": "1.0"}) as http:
        for user, status in (("alice", 200), ("bob", 404)):
            async with http.get(f"http://127.0.0.1:{port}/tasks/{task.id}",
                                headers={"X-User": user}) as resp:
                assert resp.status == status, await resp.text()
