"""`serve --grpc-carrier pyvoy` while calls wait: a deadline, a client that
leaves a stream, streams left open beside other calls, and what the server
logs meanwhile. pyvoy's ASGI `receive` answers at once where other servers
wait (docs/grpc-carriers.md): these are the places that depends on."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager

import aiohttp
import grpc
import pytest

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.conftest import send_request
from tests.processes import Server, reap, start_server

pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
V1 = (("a2a-version", "1.0"),)


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    """`serve --grpc-carrier pyvoy`, memory store, the demo agent."""
    started = asyncio.run(start_server("serve", "--store", "memory", "--grpc-carrier", "pyvoy"))
    try:
        yield started
    finally:
        reap(started.proc)


async def test_a_deadline_ends_the_call_not_the_task(server: Server) -> None:
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = A2AServiceStub(channel)
        request = pb.SendMessageRequest(message=pb.Message(
            message_id="deadline-1", role=pb.ROLE_USER, parts=[pb.Part(text="slow 30")]))
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.SendMessage(request, metadata=V1, timeout=0.5)
        assert info.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        listed = await stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
        (task,) = [t for t in listed.tasks if t.history and
                   t.history[0].message_id == "deadline-1"]
        assert task.status.state == pb.TASK_STATE_WORKING  # the run goes on
        await stub.CancelTask(pb.CancelTaskRequest(id=task.id), metadata=V1)
    assert "Traceback" not in server.log()


async def test_a_client_that_leaves_a_stream_leaves_the_server_whole(server: Server) -> None:
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = A2AServiceStub(channel)
        call = stub.SendStreamingMessage(send_request("slow 30"), metadata=V1)
        first = await call.read()
        task_id = first.task.id
        assert await open_streams(server) == 1
        call.cancel()
        assert await call.code() == grpc.StatusCode.CANCELLED
        for _ in range(100):  # the server hears of it, and ends its side (5 s at most)
            if await open_streams(server) == 0:
                break
            await asyncio.sleep(0.05)
        assert await open_streams(server) == 0
        again = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=V1)
        assert (await again.read()).task.status.state == pb.TASK_STATE_WORKING
        again.cancel()
        ended = await stub.CancelTask(pb.CancelTaskRequest(id=task_id), metadata=V1)
    assert ended.status.state == pb.TASK_STATE_CANCELED
    assert "Traceback" not in server.log()


async def open_streams(server: Server) -> float:
    """gRPC SendStreamingMessage streams open, as /metrics (on the one port) says."""
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/metrics") as resp:
            text = await resp.text()
    wanted = 'a2a_open_streams{binding="grpc",method="SendStreamingMessage"} '
    return sum(float(line[len(wanted):]) for line in text.splitlines()
               if line.startswith(wanted))


async def test_streams_and_calls_leave_nothing_in_the_log(server: Server) -> None:
    """SSE streams (the ASGI face) and gRPC calls end without an error in
    pyvoy's loop: a `receive` cancelled while it waits makes one per request."""
    body = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage", "params": {
        "message": {"messageId": "", "role": "ROLE_USER", "parts": [{"text": "stream 2"}]}}}
    async with aiohttp.ClientSession() as http:
        for n in range(3):
            body["params"]["message"]["messageId"] = f"sse-{n}"  # type: ignore[index]
            async with http.post(server.url + "/", json=body,
                                 headers={"A2A-Version": "1.0"}) as resp:
                assert (await resp.text()).count("data:") == 5
    async with grpc.aio.insecure_channel(server.target) as channel:
        stub = A2AServiceStub(channel)
        for _ in range(3):
            await stub.SendMessage(send_request("calls"), metadata=V1)
        async with http_after(server) as status:
            assert status == 200
    assert "Exception in callback" not in server.log()
    assert "InvalidStateError" not in server.log()


@asynccontextmanager
async def http_after(server: Server) -> AsyncIterator[int]:
    """One more request on a new connection: what came before it has been handled."""
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/.well-known/agent-card.json") as resp:
            yield resp.status


async def test_open_streams_leave_the_server_free_for_other_calls(server: Server) -> None:
    """Streams waiting for events (SSE on JSON-RPC and REST, gRPC) while other
    calls come: pyvoy's `receive` answers at once where other servers wait,
    and a stream asking it in a loop took the core from every other call."""
    async with aiohttp.ClientSession() as http, \
            grpc.aio.insecure_channel(server.target) as channel:
        stub = A2AServiceStub(channel)
        asked = [(await stub.SendMessage(send_request("ask"), metadata=V1)).task.id
                 for _ in range(6)]
        opened = []
        for n, task_id in enumerate(asked):
            if n % 3 == 0:
                call = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id), metadata=V1)
                await call.read()
                opened.append(call)
                continue
            resp = await (http.post(server.url + f"/tasks/{task_id}:subscribe",
                                    headers={"A2A-Version": "1.0"}) if n % 3 == 1 else
                          http.post(server.url + "/", headers={"A2A-Version": "1.0"}, json={
                              "jsonrpc": "2.0", "id": n, "method": "SubscribeToTask",
                              "params": {"id": task_id}}))
            await resp.content.readline()  # its first event is there
            opened.append(resp)
        for n in range(20):
            sent = await stub.SendMessage(send_request(f"meanwhile {n}"), metadata=V1,
                                          timeout=5)
            assert sent.task.status.state == pb.TASK_STATE_COMPLETED
        for each in opened:
            each.cancel() if isinstance(each, grpc.aio.Call) else each.close()
