"""The load generator's calls: each binding spoken on the wire, every answer checked.

HTTP goes through benchmarks.httpwire (raw keep-alive connections: one per
worker), gRPC through stubs generated from our proto (one channel, as a
client process would use it). A call returns True only for a correct answer:
the right state, the echoed artifact, the full page, every stream event in
order; anything else counts as an error, not as throughput.
"""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub

from .httpwire import Connection, get, post

HOST = "127.0.0.1"
VERSION = {"A2A-Version": "1.0"}
GRPC_VERSION = (("a2a-version", "1.0"),)
Call = Callable[[], Awaitable[bool]]
MakeCall = Callable[[], Awaitable[Call]]


@dataclass
class Result:
    rate: float  # per second: requests, or events for streams
    p50_ms: float
    p99_ms: float
    errors: int
    loadgen_cpu: float  # share of one core the load generator used
    extra: dict[str, float] = field(default_factory=dict)


async def load(make: MakeCall, seconds: float, concurrency: int) -> Result:
    """`concurrency` workers, each with its own call (connection), for `seconds`."""
    calls = [await make() for _ in range(concurrency)]
    latencies: list[float] = []
    errors = 0
    deadline = time.perf_counter() + seconds

    async def worker(call: Call) -> None:
        nonlocal errors
        while time.perf_counter() < deadline:
            start = time.perf_counter()
            try:
                ok = await call()
            except Exception:
                ok = False
            if ok:
                latencies.append(time.perf_counter() - start)
            else:
                errors += 1

    cpu0, wall0 = time.process_time(), time.perf_counter()
    await asyncio.gather(*(worker(c) for c in calls))
    wall = time.perf_counter() - wall0
    cpu = (time.process_time() - cpu0) / wall
    latencies.sort()

    def pct(q: float) -> float:
        if not latencies:
            return float("nan")
        return latencies[min(len(latencies) - 1, int(len(latencies) * q))] * 1000

    return Result(len(latencies) / wall, pct(0.5), pct(0.99), errors, cpu)


def message_json(text: str) -> str:
    return f'{{"messageId":"{uuid.uuid4()}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}'


def message_pb(text: str) -> pb.Message:
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                      parts=[pb.Part(text=text)])


def echoed(task: Any) -> bool:
    try:
        return bool(task["status"]["state"] == "TASK_STATE_COMPLETED"
                    and task["artifacts"][0]["parts"][0]["text"] == "echo: hello")
    except (KeyError, IndexError, TypeError):
        return False


def full_page(page: dict[str, object]) -> bool:
    tasks = page.get("tasks")
    return isinstance(tasks, list) and len(tasks) == 50 and bool(page.get("nextPageToken"))


class Http:
    """JSON-RPC and REST calls to one server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.host = f"{HOST}:{port}"

    async def connect(self) -> Connection:
        return await Connection.open(HOST, self.port)

    def rpc(self, method: str, params: str) -> bytes:
        body = f'{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{params}}}'
        return post("/", body.encode(), self.host, VERSION)

    async def jsonrpc_send(self) -> Call:
        conn = await self.connect()

        async def call() -> bool:
            status, body = await conn.request(self.rpc(
                "SendMessage", f'{{"message":{message_json("hello")}}}'))
            return status == 200 and echoed(json.loads(body)["result"]["task"])
        return call

    async def rest_send(self) -> Call:
        conn = await self.connect()

        async def call() -> bool:
            body = f'{{"message":{message_json("hello")}}}'.encode()
            status, answer = await conn.request(post("/message:send", body, self.host, VERSION))
            return status == 200 and echoed(json.loads(answer)["task"])
        return call

    async def jsonrpc_get(self, task_id: str) -> Call:
        conn, raw = await self.connect(), self.rpc("GetTask", f'{{"id":"{task_id}"}}')

        async def call() -> bool:
            status, body = await conn.request(raw)
            return status == 200 and json.loads(body)["result"]["id"] == task_id
        return call

    async def rest_get(self, task_id: str) -> Call:
        conn, raw = await self.connect(), get(f"/tasks/{task_id}", self.host, VERSION)

        async def call() -> bool:
            status, body = await conn.request(raw)
            return status == 200 and json.loads(body)["id"] == task_id
        return call

    async def jsonrpc_list(self) -> Call:
        conn, raw = await self.connect(), self.rpc("ListTasks", '{"pageSize":50}')

        async def call() -> bool:
            status, body = await conn.request(raw)
            return status == 200 and full_page(json.loads(body)["result"])
        return call

    async def rest_list(self) -> Call:
        conn, raw = await self.connect(), get("/tasks?pageSize=50", self.host, VERSION)

        async def call() -> bool:
            status, body = await conn.request(raw)
            return status == 200 and full_page(json.loads(body))
        return call

    async def stream(self, binding: str, text: str, firsts: list[float],
                     expect: Callable[[list[Any]], bool]) -> Call:
        conn = await self.connect()

        async def call() -> bool:
            if binding == "jsonrpc":
                raw = self.rpc("SendStreamingMessage", f'{{"message":{message_json(text)}}}')
            else:
                raw = post("/message:stream", f'{{"message":{message_json(text)}}}'.encode(),
                           self.host, VERSION)
            start = time.perf_counter()
            events: list[dict[str, object]] = []
            async for data in conn.events(raw):
                if not events:
                    firsts.append(time.perf_counter() - start)
                event = json.loads(data)
                events.append(event["result"] if binding == "jsonrpc" else event)
            return expect(events)
        return call


class Grpc:
    """gRPC calls to one server, over one channel."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.aio.insecure_channel(f"{HOST}:{port}")
        self.stub = A2AServiceStub(self.channel)

    async def close(self) -> None:
        await self.channel.close()

    async def send(self) -> Call:
        async def call() -> bool:
            resp = await self.stub.SendMessage(
                pb.SendMessageRequest(message=message_pb("hello")), metadata=GRPC_VERSION)
            return bool(resp.task.status.state == pb.TASK_STATE_COMPLETED
                        and resp.task.artifacts[0].parts[0].text == "echo: hello")
        return call

    async def get(self, task_id: str) -> Call:
        async def call() -> bool:
            task = await self.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=GRPC_VERSION)
            return bool(task.id == task_id)
        return call

    async def list_tasks(self) -> Call:
        async def call() -> bool:
            page = await self.stub.ListTasks(pb.ListTasksRequest(page_size=50),
                                             metadata=GRPC_VERSION)
            return len(page.tasks) == 50 and bool(page.next_page_token)
        return call

    async def stream(self, text: str, firsts: list[float],
                     expect: Callable[[list[pb.StreamResponse]], bool]) -> Call:
        async def call() -> bool:
            start = time.perf_counter()
            events: list[pb.StreamResponse] = []
            async for event in self.stub.SendStreamingMessage(
                    pb.SendMessageRequest(message=message_pb(text)), metadata=GRPC_VERSION):
                if not events:
                    firsts.append(time.perf_counter() - start)
                events.append(event)
            return expect(events)
        return call


def chunks_json(events: list[Any]) -> bool:
    """`stream 100`: the task, working, 100 chunks in order, completed."""
    try:
        texts = [e["artifactUpdate"]["artifact"]["parts"][0]["text"] for e in events
                 if "artifactUpdate" in e]
        last = events[-1]["statusUpdate"]["status"]["state"]
    except (KeyError, IndexError, TypeError):
        return False
    return texts == [f"chunk {i}/100" for i in range(1, 101)] and last == "TASK_STATE_COMPLETED"


def chunks_pb(events: list[pb.StreamResponse]) -> bool:
    texts = [e.artifact_update.artifact.parts[0].text for e in events
             if e.HasField("artifact_update")]
    return (texts == [f"chunk {i}/100" for i in range(1, 101)]
            and events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED)
