"""What the process as a whole does under pressure, on real `serve`
processes: SIGTERM drains it (not ready at once, calls taken for the notice,
then refused as retryable, open streams ended where a client can resume,
then exit), and past its bound on calls in progress it refuses new ones at
once with a retryable 429 instead of queueing them. A stream moving to
another replica on SIGTERM is in test_replicas.py."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import uuid
from pathlib import Path
from typing import Any

import aiohttp
import grpc
import pytest

from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from tests.carried import carriers
from tests.processes import Server, reap, start_server, wait_serving

V10 = {"A2A-Version": "1.0"}


def rpc(method: str, params: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": str(uuid.uuid4()), "method": method, "params": params}


def send_params(text: str) -> dict[str, Any]:
    return {"message": {"messageId": str(uuid.uuid4()), "role": "ROLE_USER",
                        "parts": [{"text": text}]}}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


async def until(check: Any, what: str) -> Any:
    """Poll `check()` (an awaitable factory) until it returns something truthy
    (10 s at most): what the server says over HTTP has no event to wait on."""
    for _ in range(200):
        if found := await check():
            return found
        await asyncio.sleep(0.05)
    raise AssertionError(f"not seen in 10 s: {what}")


async def test_sigterm_drains_then_exits(tmp_path: Path) -> None:
    server = await start_server("serve", "--store", f"sqlite:///{tmp_path}/tasks.db",
                                "--drain-notice", "5", "--grace", "3")
    try:
        # The stream has a session of its own: the server ends it (resume elsewhere)
        # and closes its connection, and a pool the polls share could take that
        # connection back as the close arrives and send a POST on it, which no
        # HTTP/1.1 client retries (a client race, as with any idle close).
        async with aiohttp.ClientSession() as streaming, aiohttp.ClientSession() as http:
            stream = await streaming.post(server.url + "/", headers=V10,
                                          json=rpc("SendStreamingMessage", send_params("slow 30")))
            first = json.loads((await _next_data(stream))["data"])["result"]
            task_id = first["task"]["id"]
            server.proc.send_signal(signal.SIGTERM)

            async def not_ready() -> bool:
                async with http.get(server.url + "/readyz") as r:
                    return r.status == 503 and "draining" in await r.text()
            await until(not_ready, "/readyz answers 503 while draining")
            # the notice: calls are still taken
            async with http.post(server.url + "/", headers=V10,
                                 json=rpc("GetTask", {"id": task_id})) as r:
                assert "result" in await r.json()

            async def refused() -> dict[str, Any] | None:
                async with http.post(server.url + "/", headers=V10,
                                     json=rpc("SendMessage", send_params("hello"))) as r:
                    body: dict[str, Any] = await r.json()
                    if "error" in body:  # 503 for a balancer, the JSON-RPC error for clients
                        assert (r.status, r.headers["Retry-After"]) == (503, "1")
                        error: dict[str, Any] = body["error"]
                        return error
                    return None
            error = await until(refused, "new calls refused after the notice")
            assert error["code"] == -32000 and "shutting down" in error["message"]
            # a server alone: no other replica to send the client to
            assert "retry once it is back" in error["message"], error
            assert "replica" not in error["message"], error
            # the stream ends with a retryable error saying where to resume, not cut
            rest = (await asyncio.wait_for(stream.text(), 10)).strip().split("\n\n")
            last = json.loads(rest[-1].split("data: ", 1)[1])["error"]
            assert last["code"] == -32000
            assert "resume the stream once it is back" in last["message"], last
            [info] = [d for d in last["data"] if d["@type"].endswith("ErrorInfo")]
            assert info["reason"] == "UNAVAILABLE" and info["metadata"]["taskId"] == task_id
            assert int(info["metadata"]["lastEventId"]) >= 1
        assert await asyncio.wait_for(asyncio.to_thread(server.proc.wait), 20) == 0
        log = server.log()
        assert "drained: 1 stream(s) ended" in log and "1 task(s) still running" in log
    finally:
        reap(server.proc)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
@pytest.mark.parametrize("carrier", carriers())
async def test_a_signal_to_the_process_group_drains(carrier: str, sig: int) -> None:
    """Ctrl-C in a terminal (SIGINT to the foreground process group), or `timeout`'s
    SIGTERM to its command's group: the server drains as on a signal to it alone,
    the open stream ends with its resumable error, on both carriers (on pyvoy,
    Envoy is in a group of its own, so it is drained, not stopped at once)."""
    server = await start_server("serve", "--store", "memory", "--drain-notice", "0",
                                "--grace", "2", "--grpc-carrier", carrier, group=True)
    try:
        async with aiohttp.ClientSession() as streaming:
            stream = await streaming.post(server.url + "/", headers=V10,
                                          json=rpc("SendStreamingMessage", send_params("slow 30")))
            await _next_data(stream)
            os.killpg(server.proc.pid, sig)
            rest = (await asyncio.wait_for(stream.text(), 20)).strip().split("\n\n")
        last = json.loads(rest[-1].split("data: ", 1)[1])
        assert last["error"]["code"] == -32000, rest[-1]
        assert await asyncio.wait_for(asyncio.to_thread(server.proc.wait), 20) == 0
        log = server.log()
        assert "drained: 1 stream(s) ended" in log, log
        assert "could not drain" not in log and "calls in progress" not in log, log
    finally:
        reap(server.proc)


@pytest.mark.parametrize("carrier", carriers())
async def test_each_answer_of_a_draining_server_closes_its_connection(carrier: str) -> None:
    """Keep-alive connections opened before SIGTERM, as a client's pool keeps
    them: once the server drains, the next answer on each says `Connection:
    close`, on the notice's calls and on the refusals after it (no new
    connection is taken then), so that the client's next call opens a
    connection its balancer sends to another replica."""
    server = await start_server("serve", "--store", "memory", "--drain-notice", "1",
                                "--grace", "5", "--grpc-carrier", carrier)
    kept = [await asyncio.open_connection("127.0.0.1", server.http_port) for _ in "ab"]
    try:
        for reader, writer in kept:
            assert (await _ask(reader, writer))[1].get("connection") is None
        async with aiohttp.ClientSession() as streaming:  # keeps it draining past the notice
            stream = await streaming.post(server.url + "/", headers=V10,
                                          json=rpc("SendStreamingMessage", send_params("slow 8")))
            await _next_data(stream)
            server.proc.send_signal(signal.SIGTERM)
            await _closes_then_refuses(server, *kept)
    finally:
        for _, writer in kept:
            writer.close()
        reap(server.proc)


Connection = tuple[asyncio.StreamReader, asyncio.StreamWriter]


async def _closes_then_refuses(server: Server, during: Connection, after: Connection) -> None:
    for _ in range(200):  # until the server has heard the signal
        status, headers = await _ask(*during)
        if headers.get("connection") == "close":
            break
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("no answer closed its connection while draining")
    assert status == 503  # /readyz
    for _ in range(200):  # until the notice is over: new connections are refused
        try:
            _, writer = await asyncio.open_connection("127.0.0.1", server.http_port)
        except ConnectionRefusedError:
            break
        writer.close()
        await asyncio.sleep(0.05)
    else:
        raise AssertionError("still taking connections after the notice:\n" + server.log())
    body = json.dumps(rpc("SendMessage", send_params("hello"))).encode()
    try:
        status, headers = await _ask(*after, b"POST / HTTP/1.1\r\nHost: a\r\nContent-Length: "
                                     + str(len(body)).encode() + b"\r\n\r\n" + body)
    except (asyncio.IncompleteReadError, ConnectionResetError):
        return  # closed while idle (aiohttp does, as it stops listening): as good
    assert (status, headers.get("connection"), headers.get("retry-after")) == (503, "close", "1")


async def _ask(reader: asyncio.StreamReader, writer: asyncio.StreamWriter,
               request: bytes = b"GET /readyz HTTP/1.1\r\nHost: a\r\n\r\n",
               ) -> tuple[int, dict[str, str]]:
    """One HTTP/1.1 exchange on a connection we keep: the status and headers."""
    writer.write(request)
    head = (await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)).decode("latin-1")
    status_line, *lines = head.strip().split("\r\n")
    headers = {k.strip().lower(): v.strip().lower()
               for k, _, v in (line.partition(":") for line in lines)}
    await reader.readexactly(int(headers.get("content-length", "0")))
    return int(status_line.split()[1]), headers


async def _next_data(resp: aiohttp.ClientResponse) -> dict[str, str]:
    """The next SSE event's fields, read as it arrives (keep-alives skipped)."""
    fields: dict[str, str] = {}
    while True:
        line = (await resp.content.readline()).decode().rstrip("\n")
        if not line:
            if fields:
                return fields
            continue
        if not line.startswith(":"):
            key, _, value = line.partition(": ")
            fields[key] = value


@pytest.fixture
async def small() -> Any:
    server = await start_server("serve", "--store", "memory", "--max-inflight", "4")
    try:
        yield server
    finally:
        reap(server.proc)


async def test_ten_times_capacity_is_refused_at_once(small: Server) -> None:
    """40 blocking sends of a 5 s task against a bound of 4 calls in progress,
    on all three bindings: the rest are refused at once (429 / -32042 /
    RESOURCE_EXHAUSTED, retryable), nothing else fails, memory stays put."""
    channel = await wait_serving(small.grpc_port, small.proc)
    stub = A2AServiceStub(channel)
    before = rss_kib(small.proc.pid)
    outcomes: list[str] = []
    async with aiohttp.ClientSession() as http:
        async def jsonrpc() -> None:
            async with http.post(small.url + "/", headers=V10,
                                 json=rpc("SendMessage", send_params("slow 5"))) as r:
                body = await r.json()
                status, retry_after = r.status, r.headers.get("Retry-After")
            if "error" in body:  # refused by HTTP too: 429, the JSON-RPC error in the body
                assert (status, body["error"]["code"]) == (429, -32042), body
                assert retry_after is not None and int(retry_after) >= 1
                outcomes.append("refused")
            else:
                outcomes.append(body["result"]["task"]["status"]["state"])

        async def rest() -> None:
            async with http.post(small.url + "/message:send", headers=V10,
                                 json=send_params("slow 5")) as r:
                if r.status == 429:
                    assert int(r.headers["Retry-After"]) >= 1
                    outcomes.append("refused")
                else:
                    assert r.status == 200, await r.text()
                    outcomes.append((await r.json())["task"]["status"]["state"])

        async def grpc_call() -> None:
            try:
                sent = await stub.SendMessage(pb.SendMessageRequest(message=pb.Message(
                    message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                    parts=[pb.Part(text="slow 5")])))
                outcomes.append(pb.TaskState.Name(sent.task.status.state))
            except grpc.aio.AioRpcError as err:
                assert err.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, err
                outcomes.append("refused")

        calls = [(jsonrpc, rest, grpc_call)[i % 3]() for i in range(40)]
        await asyncio.wait_for(asyncio.gather(*calls), 60)
    await channel.close()
    assert set(outcomes) <= {"refused", "TASK_STATE_COMPLETED"}
    assert outcomes.count("refused") >= 30 and 1 <= outcomes.count("TASK_STATE_COMPLETED") <= 10
    assert rss_kib(small.proc.pid) - before < 30 * 1024  # KiB: nothing queued up


async def test_the_client_backs_off_and_gets_through(small: Server) -> None:
    """Our client, refused for capacity, waits the Retry-After (jittered) and
    retries: 12 sends of 1 s tasks through a bound of 4 all complete."""
    async with await A2AClient.connect(small.url, ClientOptions(retries=20, backoff=0.05)) as c:
        done = await asyncio.wait_for(asyncio.gather(
            *(c.send_text("slow 1") for _ in range(12))), 90)
    assert {d.task.status.state for d in done} == {pb.TASK_STATE_COMPLETED}
    async with aiohttp.ClientSession() as http, http.get(small.url + "/metrics") as r:
        metrics = await r.text()
    shed = [line for line in metrics.splitlines()
            if line.startswith('a2a_shed_total{why="capacity"}')]
    assert shed and float(shed[0].split()[-1]) > 0  # it was refused, and got through
