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


async def load(make: MakeCall, seconds: float, concurrency: int,
               start_at: float | None = None) -> Result:
    """`concurrency` workers, each with its own call (connection), for `seconds`;
    from the wall-clock instant `start_at` if given (several load processes
    with one window), once every connection is made."""
    calls = [await make() for _ in range(concurrency)]
    if start_at is not None:
        await asyncio.sleep(max(0.0, start_at - time.time()))
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


def message_json(text: str, message_id: str = "") -> str:
    message_id = message_id or str(uuid.uuid4())
    return f'{{"messageId":"{message_id}","role":"ROLE_USER","parts":[{{"text":"{text}"}}]}}'


def message_pb(text: str) -> pb.Message:
    return pb.Message(message_id=str(uuid.uuid4()), role=pb.ROLE_USER,
                      parts=[pb.Part(text=text)])


def echoed(task: Any, message_id: str = "") -> bool:
    """A whole answer to `hello`: a new task with its ids and timestamp, COMPLETED, the
    echo artifact, and (when `message_id` is given) that message in its history under
    the task's ids."""
    try:
        ok = (task["status"]["state"] == "TASK_STATE_COMPLETED"
              and bool(task["status"]["timestamp"]) and bool(task["contextId"])
              and task["artifacts"][0]["parts"][0]["text"] == "echo: hello")
        if message_id:
            sent = task["history"][0]
            ok = ok and (sent["messageId"] == message_id and sent["taskId"] == task["id"]
                         and sent["contextId"] == task["contextId"]
                         and sent["parts"][0]["text"] == "hello")
        return bool(ok)
    except (KeyError, IndexError, TypeError):
        return False


def echoed_pb(task: pb.Task, message_id: str) -> bool:
    return bool(task.status.state == pb.TASK_STATE_COMPLETED and task.context_id
                and task.status.HasField("timestamp")
                and task.artifacts[0].parts[0].text == "echo: hello"
                and task.history[0].message_id == message_id
                and task.history[0].task_id == task.id
                and task.history[0].parts[0].text == "hello")


def full_page(page: dict[str, Any]) -> bool:
    """A page of 50 distinct tasks, and a token for the next."""
    tasks = page.get("tasks")
    return (isinstance(tasks, list) and len(tasks) == 50 and bool(page.get("nextPageToken"))
            and len({t.get("id") for t in tasks}) == 50)


class Fresh:
    """Task ids a worker has been answered with: a server answering the same task twice
    (a fixed answer) is wrong."""

    def __init__(self) -> None:
        self.last = ""

    def new(self, task_id: object) -> bool:
        if not isinstance(task_id, str) or not task_id or task_id == self.last:
            return False
        self.last = task_id
        return True


class Http:
    """JSON-RPC and REST calls to one server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.host = f"{HOST}:{port}"

    async def connect(self) -> Connection:
        return await Connection.open(HOST, self.port)

    def rpc(self, method: str, params: str, rid: int = 1) -> bytes:
        body = f'{{"jsonrpc":"2.0","id":{rid},"method":"{method}","params":{params}}}'
        return post("/", body.encode(), self.host, VERSION)

    async def jsonrpc_send(self) -> Call:
        conn, fresh = await self.connect(), Fresh()
        counter = iter(range(1, 1 << 62))

        async def call() -> bool:
            rid, mid = next(counter), str(uuid.uuid4())
            status, body = await conn.request(self.rpc(
                "SendMessage", f'{{"message":{message_json("hello", mid)}}}', rid))
            answer = json.loads(body)
            task = answer["result"]["task"]
            return (status == 200 and answer["id"] == rid and echoed(task, mid)
                    and fresh.new(task["id"]))
        return call

    async def rest_send(self) -> Call:
        conn, fresh = await self.connect(), Fresh()

        async def call() -> bool:
            mid = str(uuid.uuid4())
            body = f'{{"message":{message_json("hello", mid)}}}'.encode()
            status, answer = await conn.request(post("/message:send", body, self.host, VERSION))
            task = json.loads(answer)["task"]
            return status == 200 and echoed(task, mid) and fresh.new(task["id"])
        return call

    async def jsonrpc_get(self, task_id: str) -> Call:
        conn, raw = await self.connect(), self.rpc("GetTask", f'{{"id":"{task_id}"}}')

        async def call() -> bool:
            status, body = await conn.request(raw)
            task = json.loads(body)["result"]
            return status == 200 and task["id"] == task_id and echoed(task)
        return call

    async def rest_get(self, task_id: str) -> Call:
        conn, raw = await self.connect(), get(f"/tasks/{task_id}", self.host, VERSION)

        async def call() -> bool:
            status, body = await conn.request(raw)
            task = json.loads(body)
            return status == 200 and task["id"] == task_id and echoed(task)
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
        fresh = Fresh()

        async def call() -> bool:
            message = message_pb("hello")
            resp = await self.stub.SendMessage(
                pb.SendMessageRequest(message=message), metadata=GRPC_VERSION)
            return echoed_pb(resp.task, message.message_id) and fresh.new(resp.task.id)
        return call

    async def get(self, task_id: str) -> Call:
        async def call() -> bool:
            task = await self.stub.GetTask(pb.GetTaskRequest(id=task_id), metadata=GRPC_VERSION)
            return bool(task.id == task_id and task.status.state == pb.TASK_STATE_COMPLETED
                        and task.artifacts[0].parts[0].text == "echo: hello")
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
    """`stream 100`: the task, WORKING, 100 chunks of one artifact in order (append and
    lastChunk set as they must be), COMPLETED; every event of the task first sent."""
    try:
        task_id = events[0]["task"]["id"]
        updates = [e["artifactUpdate"] for e in events[2:-1]]
        ok = (len(events) == 103 and bool(task_id)
              and events[1]["statusUpdate"]["status"]["state"] == "TASK_STATE_WORKING"
              and events[-1]["statusUpdate"]["status"]["state"] == "TASK_STATE_COMPLETED"
              and events[1]["statusUpdate"]["taskId"] == task_id
              and events[-1]["statusUpdate"]["taskId"] == task_id
              and len({u["artifact"]["artifactId"] for u in updates}) == 1)
        for i, u in enumerate(updates, 1):
            ok = ok and (u["taskId"] == task_id and u.get("append", False) == (i > 1)
                         and u.get("lastChunk", False) == (i == 100)
                         and u["artifact"]["parts"][0]["text"] == f"chunk {i}/100")
        return bool(ok)
    except (KeyError, IndexError, TypeError):
        return False


def chunks_pb(events: list[pb.StreamResponse]) -> bool:
    if len(events) != 103 or not events[0].task.id:
        return False
    task_id, updates = events[0].task.id, [e.artifact_update for e in events[2:-1]]
    ok = (events[1].status_update.status.state == pb.TASK_STATE_WORKING
          and events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
          and events[1].status_update.task_id == task_id == events[-1].status_update.task_id
          and len({u.artifact.artifact_id for u in updates}) == 1)
    for i, u in enumerate(updates, 1):
        ok = ok and (u.task_id == task_id and u.append == (i > 1) and u.last_chunk == (i == 100)
                     and u.artifact.parts[0].text == f"chunk {i}/100")
    return bool(ok)
