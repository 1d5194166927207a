"""Several streams of one task: each event is printed (JSON) and serialised
(gRPC) once for all of them (core/stream.py `Renderings`), and every stream still
gets exactly what a printing of its own would give: over JSON-RPC (under an
id orjson writes and one only json writes), HTTP+JSON, gRPC, the 0.3
JSON-RPC shape, and a 1.0 reader beside a 1.1 reader of a counted task."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest
from google.protobuf import json_format

from a2a_grpc.bridge import codec
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.handler.generations import PreviewOptions
from tests.bindings import parse_sse
from tests.conftest import Stack, StackFactory, user_message
from tests.integration.test_streams import collect, stepper

HUGE_ID = 2**70  # beyond 64 bits: orjson refuses to write it, json does


class SseReader:
    """An SSE response read frame by frame, so a test can wait for the first."""

    def __init__(self, resp: aiohttp.ClientResponse) -> None:
        self.resp = resp
        self.text = ""

    async def first(self) -> None:
        """Until the stream's first event (the task): the reader is subscribed."""
        assert self.resp.status == 200, await self.resp.text()
        self.text += (await self.resp.content.readuntil(b"\n\n")).decode()

    async def rest(self) -> list[Any]:
        """The stream to its end, after the first event: each event's (id, data)."""
        self.text += (await self.resp.content.read()).decode()
        self.resp.release()
        events, _ = parse_sse(self.text)
        return [(e.id, e.data) for e in events[1:]]


async def open_sse(s: Stack, method: str, url: str, body: Any = None,
                   headers: dict[str, str] | None = None) -> SseReader:
    resp = await s.session.request(method, url, json=body, headers=headers or {})
    reader = SseReader(resp)
    await reader.first()
    return reader


def subscriber(s: Stack) -> Any:
    return s.channel.unary_stream(
        "/lf.a2a.v1.A2AService/SubscribeToTask",
        request_serializer=pb.SubscribeToTaskRequest.SerializeToString,
        response_deserializer=pb.StreamResponse.FromString)


def subscribe_rpc(task_id: str, rid: Any, method: str = "SubscribeToTask") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"id": task_id}}


async def started(s: Stack) -> str:
    """A task whose agent waits at its first gate, WORKING."""
    resp = await s.channel.unary_unary(
        "/lf.a2a.v1.A2AService/SendMessage",
        request_serializer=pb.SendMessageRequest.SerializeToString,
        response_deserializer=pb.SendMessageResponse.FromString,
    )(pb.SendMessageRequest(message=user_message("go"),
                            configuration=pb.SendMessageConfiguration(return_immediately=True)))
    return str(resp.task.id)


def printings(monkeypatch: pytest.MonkeyPatch) -> list[pb.StreamResponse]:
    """Every stream event the HTTP edges print from now on."""
    seen: list[pb.StreamResponse] = []
    to_dict = codec.to_dict

    def counted(msg: Any) -> dict[str, Any]:
        if isinstance(msg, pb.StreamResponse):
            seen.append(msg)
        return to_dict(msg)
    monkeypatch.setattr(codec, "to_dict", counted)
    return seen


async def test_every_binding_gets_each_event_as_printed_afresh_printed_once(
        stack: StackFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    agent, gates = stepper()
    s = await stack(agent)
    task_id = await started(s)
    await asyncio.wait_for(gates[0].reached.wait(), 5)
    stub_a = subscriber(s)
    grpc_a = stub_a(pb.SubscribeToTaskRequest(id=task_id))
    grpc_b = stub_a(pb.SubscribeToTaskRequest(id=task_id))
    assert (await grpc_a.read()).task.id == (await grpc_b.read()).task.id == task_id
    v10 = {"A2A-Version": "1.0"}
    rpc_1 = await open_sse(s, "POST", s.base_url + "/", subscribe_rpc(task_id, 1), v10)
    rpc_huge = await open_sse(s, "POST", s.base_url + "/", subscribe_rpc(task_id, HUGE_ID), v10)
    rest = await open_sse(s, "GET", f"{s.base_url}/tasks/{task_id}:subscribe", headers=v10)
    old = await open_sse(s, "POST", s.base_url + "/",
                         subscribe_rpc(task_id, "r", "tasks/resubscribe"))
    assert s.handler.bus.subscriber_count(task_id) == 6

    printed = printings(monkeypatch)
    for gate in gates:
        gate.open()
    live = await collect(grpc_a)
    assert await collect(grpc_b) == live
    assert [e.WhichOneof("payload") for e in live] == ["status_update"] * 5
    assert live[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
    afresh = [json_format.MessageToDict(e) for e in live]

    got_1, got_huge, got_rest = await rpc_1.rest(), await rpc_huge.rest(), await rest.rest()
    ids = [i for i, _ in got_rest]
    assert len(ids) == 5 and [i for i, _ in got_1] == [i for i, _ in got_huge] == ids
    assert [d for _, d in got_rest] == afresh
    for rid, got in ((1, got_1), (HUGE_ID, got_huge)):
        assert [d for _, d in got] == [{"jsonrpc": "2.0", "id": rid, "result": a}
                                       for a in afresh]
    got_old = [d for _, d in await old.rest()]
    assert [d["result"]["kind"] for d in got_old] == ["status-update"] * 5
    assert got_old[-1]["result"]["status"]["state"] == "completed"
    # The three 1.0 JSON streams share one printing of each event; the 0.3
    # stream prints its own (another shape).
    assert len(printed) == 2 * len(live)


async def test_a_1_0_reader_beside_a_1_1_reader_gets_its_own_view(
        stack: StackFactory) -> None:
    """A counted task's events carry generations in 1.1 and none in 1.0: a
    stream whose version view changes an event prints its own copy, and
    never takes (or leaves) the shared printing."""
    agent, gates = stepper()
    s = await stack(agent, preview=PreviewOptions())
    task_id = await started(s)
    await asyncio.wait_for(gates[0].reached.wait(), 5)
    readers = {}
    for name, version in (("1.1 first", "1.1"), ("1.0", "1.0"), ("1.1 last", "1.1")):
        readers[name] = await open_sse(s, "GET", f"{s.base_url}/tasks/{task_id}:subscribe",
                                       headers={"A2A-Version": version})
    stub = subscriber(s)
    grpc_10 = stub(pb.SubscribeToTaskRequest(id=task_id), metadata=(("a2a-version", "1.0"),))
    grpc_11 = stub(pb.SubscribeToTaskRequest(id=task_id), metadata=(("a2a-version", "1.1"),))
    assert not (await grpc_10.read()).task.generation
    assert (await grpc_11.read()).task.generation > 0
    for gate in gates:
        gate.open()
    got = {name: [d for _, d in await r.rest()] for name, r in readers.items()}
    assert len(got["1.0"]) == 5
    assert all("generation" not in json.dumps(d) for d in got["1.0"])
    assert got["1.1 first"] == got["1.1 last"]
    assert all(int(d["statusUpdate"]["generation"]) > 0 for d in got["1.1 first"])
    assert [{**d, "statusUpdate": {k: v for k, v in d["statusUpdate"].items()
                                   if k != "generation"}} for d in got["1.1 first"]] == got["1.0"]
    live_10, live_11 = await collect(grpc_10), await collect(grpc_11)
    assert [e.status_update.generation for e in live_10] == [0] * 5
    assert all(e.status_update.generation > 0 for e in live_11)
    assert [json_format.MessageToDict(e) for e in live_11] == got["1.1 first"]


async def test_a_reader_that_hangs_up_leaves_the_others_their_events(
        stack: StackFactory) -> None:
    """A shared event outlives a stream that took it and went away."""
    agent, gates = stepper()
    s = await stack(agent)
    task_id = await started(s)
    await asyncio.wait_for(gates[0].reached.wait(), 5)
    stays = await open_sse(s, "GET", f"{s.base_url}/tasks/{task_id}:subscribe")
    leaves = await open_sse(s, "GET", f"{s.base_url}/tasks/{task_id}:subscribe")
    stub = subscriber(s)
    grpc_leaves = stub(pb.SubscribeToTaskRequest(id=task_id))
    await grpc_leaves.read()
    gates[0].open()
    await asyncio.wait_for(gates[1].reached.wait(), 5)
    leaves.resp.close()
    grpc_leaves.cancel()
    with pytest.raises(asyncio.CancelledError):
        await grpc_leaves.read()
    for gate in gates[1:]:
        gate.open()
    got = [d for _, d in await stays.rest()]
    assert [d["statusUpdate"]["status"]["state"] for d in got] == (
        ["TASK_STATE_WORKING"] * 4 + ["TASK_STATE_COMPLETED"])
