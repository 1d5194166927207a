"""Per-caller limits on a real `a2a-grpc serve` process, on every binding: the
request rate, open streams, tasks in flight (429 + Retry-After, gRPC
RESOURCE_EXHAUSTED with RetryInfo, JSON-RPC -32042), counted in /metrics;
and a stream whose reader stops reading, ended with a retryable error once
its backlog passes the bound, resumable from the durable log."""

from __future__ import annotations

import asyncio
import json
import socket
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import aiohttp
import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from prometheus_client.parser import text_string_to_metric_families

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.bindings import parse_sse
from tests.processes import Server, reap, start_server

KEYS = {"alice": "alice-key", "bob": "bob-key"}


@pytest.fixture
async def keys(tmp_path: Path) -> Path:
    path = tmp_path / "keys.txt"
    path.write_text("".join(f"{who}:{key}\n" for who, key in KEYS.items()))
    return path


@pytest.fixture
async def serving() -> AsyncIterator[Callable[..., Awaitable[Server]]]:
    started: list[Server] = []

    async def start(*flags: str) -> Server:
        server = await start_server("serve", "--store", "memory", *flags)
        started.append(server)
        return server

    yield start
    for server in started:
        reap(server.proc)


def send(text: str, *, immediately: bool = False) -> dict[str, object]:
    return {"message": {"messageId": f"m-{time.monotonic_ns()}", "role": "ROLE_USER",
                        "parts": [{"text": text}]},
            "configuration": {"returnImmediately": immediately}}


async def rest(session: aiohttp.ClientSession, server: Server, who: str, path: str,
               body: object = None) -> aiohttp.ClientResponse:
    headers = {"X-API-Key": KEYS[who]}
    if body is None:
        return await session.get(server.url + path, headers=headers)
    return await session.post(server.url + path, json=body, headers=headers)


async def refusals(session: aiohttp.ClientSession, server: Server) -> dict[str, float]:
    async with session.get(server.url + "/metrics") as resp:
        text = await resp.text()
    return {s.labels["limit"]: s.value for f in text_string_to_metric_families(text)
            if f.name == "a2a_limit_refusals" for s in f.samples if s.name.endswith("_total")}


async def test_the_request_rate_per_caller_on_every_binding(
        serving: Callable[..., Awaitable[Server]], keys: Path) -> None:
    server = await serving("--api-keys", str(keys), "--rate-limit", "0.1", "--rate-burst", "3")
    async with aiohttp.ClientSession() as session, \
            grpc.aio.insecure_channel(server.target) as channel:
        stub = A2AServiceStub(channel)
        alice = [("x-api-key", KEYS["alice"])]
        await stub.ListTasks(pb.ListTasksRequest(), metadata=alice)  # one token each binding
        async with await rest(session, server, "alice", "/tasks") as resp:
            assert resp.status == 200
        rpc = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
        async with session.post(server.url + "/", json=rpc, headers=dict(alice)) as resp:
            assert resp.status == 200 and "result" in await resp.json()
        # The bucket is empty: refused on each binding, with when to come back.
        async with await rest(session, server, "alice", "/tasks") as resp:
            assert resp.status == 429 and int(resp.headers["Retry-After"]) >= 9
            assert "requests per second" in (await resp.json())["error"]["message"]
        async with session.post(server.url + "/", json=rpc, headers=dict(alice)) as resp:
            assert resp.status == 429 and resp.headers["Retry-After"]
            assert (await resp.json())["error"]["code"] == -32042
        with pytest.raises(grpc.aio.AioRpcError) as info:
            await stub.ListTasks(pb.ListTasksRequest(), metadata=alice)
        assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        status = rpc_status.from_call(info.value)
        assert status is not None
        retry = [d for d in status.details if d.Is(error_details_pb2.RetryInfo.DESCRIPTOR)]
        assert retry, status
        async with await rest(session, server, "bob", "/tasks") as resp:
            assert resp.status == 200  # another caller, another bucket
        assert await refusals(session, server) == {"rate": 3.0}


async def test_open_streams_per_caller(serving: Callable[..., Awaitable[Server]],
                                       keys: Path) -> None:
    server = await serving("--api-keys", str(keys), "--max-streams", "1")
    async with aiohttp.ClientSession() as session:
        first = await rest(session, server, "alice", "/message:stream", send("slow 30"))
        assert first.status == 200
        await first.content.readuntil(b"\n\n")  # the stream is open: its first event came
        async with await rest(session, server, "alice", "/message:stream", send("hi")) as resp:
            assert resp.status == 429, await resp.text()
        async with await rest(session, server, "bob", "/message:stream", send("hi")) as resp:
            assert resp.status == 200
            events, _ = parse_sse(await resp.text())
            assert events[-1].data["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
        first.close()  # alice hangs up: her stream's slot is free again
        await asyncio.sleep(0)
        deadline = time.monotonic() + 10
        while True:
            async with await rest(session, server, "alice", "/message:stream",
                                  send("hi")) as resp:
                if resp.status == 200:
                    await resp.read()
                    break
                assert resp.status == 429 and time.monotonic() < deadline
            await asyncio.sleep(0.05)
        assert (await refusals(session, server))["streams"] >= 1


async def test_tasks_in_flight_per_caller(serving: Callable[..., Awaitable[Server]],
                                          keys: Path) -> None:
    server = await serving("--api-keys", str(keys), "--max-tasks", "1")
    async with aiohttp.ClientSession() as session:
        async with await rest(session, server, "alice", "/message:send",
                              send("slow 30", immediately=True)) as resp:
            task_id = (await resp.json())["task"]["id"]
        async with await rest(session, server, "alice", "/message:send", send("hi")) as resp:
            assert resp.status == 429
            assert "tasks of yours are running" in (await resp.json())["error"]["message"]
        async with await rest(session, server, "bob", "/message:send", send("hi")) as resp:
            assert resp.status == 200
        async with await rest(session, server, "alice", f"/tasks/{task_id}:cancel", {}) as resp:
            assert (await resp.json())["status"]["state"] == "TASK_STATE_CANCELED"
        async with await rest(session, server, "alice", "/message:send", send("hi")) as resp:
            assert resp.status == 200, await resp.text()  # the run ended with the cancel
        assert await refusals(session, server) == {"tasks": 1.0}


async def test_a_reader_that_stops_reading_is_cut_off_and_resumes(
        serving: Callable[..., Awaitable[Server]]) -> None:
    server = await serving("--stream-backlog", "20")
    # 10 MiB of chunks: more than the kernel buffers between the two ends (4 MiB)
    body = json.dumps(send("stream 10000 1024")).encode()
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # before connect: small window
    sock.setblocking(False)
    await asyncio.get_running_loop().sock_connect(sock, ("127.0.0.1", server.http_port))
    reader, writer = await asyncio.open_connection(sock=sock)
    writer.write(b"POST /message:stream HTTP/1.0\r\nHost: x\r\nContent-Type: application/json"
                 b"\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    assert b" 200 " in head.split(b"\r\n")[0]
    async with aiohttp.ClientSession() as session:
        deadline = time.monotonic() + 60
        while True:  # the agent runs to its end while this reader reads nothing
            async with session.get(server.url + "/tasks?pageSize=1") as resp:
                tasks = (await resp.json())["tasks"]
            if tasks and tasks[0]["status"]["state"] == "TASK_STATE_COMPLETED":
                break
            assert time.monotonic() < deadline
            await asyncio.sleep(0.1)
        task_id = tasks[0]["id"]
        raw = await reader.read()  # now read what the server kept for us: then it ended
        writer.close()
        events, _ = parse_sse(raw.decode())  # HTTP/1.0: the body as sent, unframed
        error = events[-1].data["error"]
        assert "resume it with SubscribeToTask" in error["message"], error
        chunks = [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"].rstrip(".")
                  for e in events if "artifactUpdate" in e.data]
        assert len(chunks) < 10000  # cut off, not buffered to the end
        last = [e.id for e in events if e.id][-1]
        async with session.post(server.url + f"/tasks/{task_id}:subscribe",
                                headers={"Last-Event-ID": last}) as resp:
            replay, _ = parse_sse(await resp.text())
        chunks += [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"].rstrip(".")
                   for e in replay if "artifactUpdate" in e.data]
        assert chunks == [f"chunk {i}/10000" for i in range(1, 10001)]  # nothing lost


async def test_two_limited_streams_of_one_task_get_the_same_events(
        serving: Callable[..., Awaitable[Server]], keys: Path) -> None:
    """Through the limits layer's wrapper, two streams sharing each event (one
    printing for both, core/stream.py Renderings) get it as each would alone."""
    server = await serving("--api-keys", str(keys), "--max-streams", "2")
    async with aiohttp.ClientSession() as session:
        async with await rest(session, server, "alice", "/message:send", send("ask")) as resp:
            task = (await resp.json())["task"]
        assert task["status"]["state"] == "TASK_STATE_INPUT_REQUIRED"
        watching = await rest(session, server, "alice", f"/tasks/{task['id']}:subscribe")
        assert watching.status == 200
        head = await watching.content.readuntil(b"\n\n")  # the task: it is subscribed
        answer = send("blue")
        answer["message"]["taskId"] = task["id"]  # type: ignore[index]
        async with await rest(session, server, "alice", "/message:stream", answer) as resp:
            assert resp.status == 200
            answered, _ = parse_sse(await resp.text())
        watched, _ = parse_sse(head.decode() + (await watching.content.read()).decode())
        watching.close()
    live = [(e.id, e.data) for e in answered]
    assert [(e.id, e.data) for e in watched[1:]] == live  # after the subscriber's snapshot
    assert [next(iter(d)) for _, d in live] == ["task", "statusUpdate", "artifactUpdate",
                                                "statusUpdate"]
    assert live[-1][1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
