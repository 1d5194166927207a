"""Resumable streams (our extension): pick a dropped stream up, no gap, no duplicate."""

from __future__ import annotations

import asyncio
from pathlib import Path

import grpc
import pytest
from google.protobuf import json_format

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.core import lifecycle
from a2a_grpc.core.stream import FIRST_EVENT_ID, RESUMABLE_STREAMS_URI
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.stores.sqlite import SqliteTaskStore
from tests.bindings import parse_sse
from tests.conftest import Stack, StackFactory, send_request
from tests.fakes import Gate, ScriptedAgent
from tests.grpc_errors import stream_fails


def chunks(events: list[pb.StreamResponse]) -> list[str]:
    return [e.artifact_update.artifact.parts[0].text for e in events
            if e.HasField("artifact_update")]


async def read_n(call: grpc.aio.UnaryStreamCall, n: int) -> list[pb.StreamResponse]:
    return [await call.read() for _ in range(n)]


async def read_rest(call: grpc.aio.UnaryStreamCall) -> list[pb.StreamResponse]:
    out = []
    while (event := await call.read()) is not grpc.aio.EOF:
        out.append(event)
    return out


@pytest.mark.parametrize("cut", [1, 2, 7, 30, 52])
async def test_grpc_resume_after_a_drop(stack: StackFactory, cut: int) -> None:
    s = await stack()
    call = s.binding("grpc").stub.SendStreamingMessage(  # type: ignore[attr-defined]
        send_request("stream 50"), metadata=(("a2a-extensions", RESUMABLE_STREAMS_URI),))
    first_id = int(dict(await call.initial_metadata())[FIRST_EVENT_ID])
    seen = await read_n(call, cut)
    call.cancel()  # the connection drops
    task_id = seen[0].task.id
    last = first_id + cut - 1  # events count up by one from the first
    resumed = s.binding("grpc").stub.SubscribeToTask(  # type: ignore[attr-defined]
        pb.SubscribeToTaskRequest(id=task_id), metadata=(("a2a-last-event-id", str(last)),))
    rest = await read_rest(resumed)
    # A replay: what follows the last event seen, each once; no Task ahead of it.
    assert not any(e.HasField("task") for e in rest)
    assert chunks(seen + rest) == [f"chunk {i}/50" for i in range(1, 51)]
    assert len(seen) + len(rest) == 53  # the task, WORKING, 50 chunks, COMPLETED
    assert rest[-1].status_update.status.state == pb.TASK_STATE_COMPLETED


@pytest.mark.parametrize("binding", ["rest", "jsonrpc"])
async def test_sse_resume_with_last_event_id(stack: StackFactory, binding: str) -> None:
    s = await stack()
    async with s.session.post(s.base_url + "/message:stream", json={"message": {
            "messageId": "m", "role": "ROLE_USER", "parts": [{"text": "stream 50"}]}}) as resp:
        head = b"".join([await resp.content.readuntil(b"\n\n") for _ in range(12)])
    seen, _ = parse_sse(head.decode())
    task_id, last = seen[0].data["task"]["id"], seen[-1].id
    assert last == "12"
    if binding == "rest":
        ctx = s.session.get(f"{s.base_url}/tasks/{task_id}:subscribe",
                            headers={"Last-Event-ID": last})
    else:
        ctx = s.session.post(s.base_url + "/", headers={"Last-Event-ID": last}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}})
    async with ctx as resp:
        rest, _ = parse_sse(await resp.text())
    if binding == "jsonrpc":
        for ev in rest:
            ev.data = ev.data["result"]
    assert not any("task" in e.data for e in rest)  # a replay, with no snapshot ahead of it
    assert [e.id for e in rest] == [str(i) for i in range(13, 13 + len(rest))]
    texts = [e.data["artifactUpdate"]["artifact"]["parts"][0]["text"]
             for e in seen + rest if "artifactUpdate" in e.data]
    assert texts == [f"chunk {i}/50" for i in range(1, 51)]


async def test_resume_of_a_finished_stream_replays_and_closes(stack: StackFactory) -> None:
    s = await stack()
    stub = s.binding("grpc").stub  # type: ignore[attr-defined]
    task = (await stub.SendMessage(send_request("stream 3"))).task
    resumed = await read_rest(stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=task.id), metadata=(("a2a-last-event-id", "0"),)))
    assert [e.WhichOneof("payload") for e in resumed] == [
        "task", "status_update", "artifact_update", "artifact_update", "artifact_update",
        "status_update"]  # the whole log: event 1 is the task as it was created
    assert resumed[0].task.status.state == pb.TASK_STATE_SUBMITTED
    assert chunks(resumed) == ["chunk 1/3", "chunk 2/3", "chunk 3/3"]
    up_to_date = await read_rest(stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=task.id), metadata=(("a2a-last-event-id", "6"),)))
    assert up_to_date == []  # it saw the final event: nothing follows
    seen = await stream_fails(stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=task.id), metadata=(("a2a-last-event-id", "7"),)))
    assert seen.reason == "INVALID_PARAMS"  # an id this task's stream never sent
    seen = await stream_fails(stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task.id)))
    assert seen.reason == "UNSUPPORTED_OPERATION"  # without a last id, the spec's rule holds
    seen = await stream_fails(stub.SubscribeToTask(
        pb.SubscribeToTaskRequest(id=task.id), metadata=(("a2a-last-event-id", "seven"),)))
    assert seen.reason == "INVALID_PARAMS"


async def test_grpc_numbers_only_for_callers_that_declare_the_extension(
        stack: StackFactory) -> None:
    """The a2a-first-event-id header costs an operation before the first event: it goes
    to callers that declared resumable streams, and to no one else."""
    s = await stack()
    stub = s.binding("grpc").stub  # type: ignore[attr-defined]
    plain = stub.SendStreamingMessage(send_request("stream 2"))
    assert FIRST_EVENT_ID not in dict(await plain.initial_metadata())
    events = await read_rest(plain)
    assert chunks(events) == ["chunk 1/2", "chunk 2/2"]
    declared = stub.SendStreamingMessage(send_request("stream 2"), metadata=(
        ("a2a-extensions", f"https://example.com/other, {RESUMABLE_STREAMS_URI}"),))
    assert dict(await declared.initial_metadata())[FIRST_EVENT_ID] == "1"
    await read_rest(declared)
    asked = (await s.binding("grpc").call("SendMessage", send_request("ask"))).task  # type: ignore[attr-defined]
    watched = stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=asked.id),
                                   metadata=(("a2a-extensions", RESUMABLE_STREAMS_URI),))
    assert dict(await watched.initial_metadata())[FIRST_EVENT_ID] == "2"  # the snapshot's
    watched.cancel()


@pytest.mark.parametrize("last", ["99999999999999999999", "-1", "1e3", str(2**63)])
async def test_an_out_of_range_last_event_id_is_invalid_params_on_sqlite(
        stack: StackFactory, tmp_path: Path, last: str) -> None:
    store = SqliteTaskStore(tmp_path / "t.db")
    await store.open()
    try:
        s = await stack(store=store)
        task = (await s.binding("grpc").call("SendMessage", send_request("stream 2"))).task  # type: ignore[attr-defined]
        async with s.session.get(f"{s.base_url}/tasks/{task.id}:subscribe",
                                 headers={"Last-Event-ID": last}) as resp:
            assert resp.status == 400, await resp.text()  # never a 500 from the driver
            body = await resp.json()
        assert body["error"]["details"][0]["reason"] == "INVALID_PARAMS"
        largest = await stream_fails(s.binding("grpc").stub.SubscribeToTask(  # type: ignore[attr-defined]
            pb.SubscribeToTaskRequest(id=task.id),
            metadata=(("a2a-last-event-id", str(2**63 - 1)),)))
        assert largest.reason == "INVALID_PARAMS"  # past the task's log, never a driver error
    finally:
        await store.close()


def _gated(gate: Gate, done: asyncio.Event) -> ScriptedAgent:
    """WORKING and chunk 1, then (once the gate opens) chunks 2 and 3 and COMPLETED."""

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await ev.artifact("chunk 1", artifact_id="a")
        await gate.wait()
        await ev.artifact("chunk 2", artifact_id="a", append=True)
        await ev.artifact("chunk 3", artifact_id="a", append=True)
        await ev.complete()
        done.set()

    return ScriptedAgent(script)


async def _resumed(s: Stack, binding: str, task_id: str, last: int,
                   ) -> list[tuple[str | None, pb.StreamResponse]]:
    """(id, event) of SubscribeToTask resumed after event `last`, to the stream's end."""
    if binding == "grpc":
        call = s.binding("grpc").stub.SubscribeToTask(  # type: ignore[attr-defined]
            pb.SubscribeToTaskRequest(id=task_id), metadata=(
                ("a2a-last-event-id", str(last)), ("a2a-extensions", RESUMABLE_STREAMS_URI)))
        first = int(dict(await call.initial_metadata())[FIRST_EVENT_ID])
        return [(str(first + i), e) for i, e in enumerate(await read_rest(call))]
    if binding == "rest":
        ctx = s.session.get(f"{s.base_url}/tasks/{task_id}:subscribe",
                            headers={"Last-Event-ID": str(last)})
    else:
        ctx = s.session.post(s.base_url + "/", headers={"Last-Event-ID": str(last)}, json={
            "jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": task_id}})
    async with ctx as resp:
        events, _ = parse_sse(await resp.text())
    return [(e.id, json_format.ParseDict(e.data["result"] if binding == "jsonrpc" else e.data,
                                         pb.StreamResponse())) for e in events]


@pytest.mark.parametrize("binding", ["grpc", "jsonrpc", "rest"])
async def test_a_stream_cut_mid_task_resumes_after_the_task_ended(
        stack: StackFactory, binding: str) -> None:
    """The issue's case: cut after event 3, the task ends meanwhile, then a resume
    with that id: events 4, 5, 6 once each, in order, the one final state last,
    and no snapshot of the end ahead of them. Folded over what came before the
    cut, they give the task as the store has it."""
    gate, done = Gate(), asyncio.Event()
    s = await stack(_gated(gate, done))
    call = s.binding("grpc").stub.SendStreamingMessage(  # type: ignore[attr-defined]
        send_request("go"))
    seen = await read_n(call, 3)  # the task, WORKING, chunk 1
    call.cancel()  # the stream is cut
    gate.open()
    await asyncio.wait_for(done.wait(), 10)  # the task ends while nobody watches
    task_id = seen[0].task.id
    rest = await _resumed(s, binding, task_id, 3)
    assert [i for i, _ in rest] == ["4", "5", "6"]
    assert [e.WhichOneof("payload") for _, e in rest] == [
        "artifact_update", "artifact_update", "status_update"]
    assert chunks([e for _, e in rest]) == ["chunk 2", "chunk 3"]
    assert rest[-1][1].status_update.status.state == pb.TASK_STATE_COMPLETED
    folded = None
    for event in seen + [e for _, e in rest]:
        folded = lifecycle.apply(folded, event).task
    stored = await s.binding("grpc").stub.GetTask(  # type: ignore[attr-defined]
        pb.GetTaskRequest(id=task_id))
    assert folded == stored
    assert [p.text for p in stored.artifacts[0].parts] == ["chunk 1", "chunk 2", "chunk 3"]
