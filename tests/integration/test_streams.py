"""SendStreamingMessage and SubscribeToTask over a real gRPC channel."""

from __future__ import annotations

import asyncio

import grpc

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Serve, send_request, user_message
from tests.fakes import Gate, ScriptedAgent
from tests.grpc_errors import fails, stream_fails


def kinds(events: list[pb.StreamResponse]) -> list[str]:
    out = []
    for e in events:
        kind = e.WhichOneof("payload")
        if kind == "status_update":
            kind = pb.TaskState.Name(e.status_update.status.state)
        elif kind == "task":
            kind = "task:" + pb.TaskState.Name(e.task.status.state)
        out.append(kind or "")
    return out


async def collect(call: object) -> list[pb.StreamResponse]:
    """Read a streaming call to its end (read() style, so it mixes with read())."""
    out = []
    while (event := await call.read()) is not grpc.aio.EOF:  # type: ignore[attr-defined]
        out.append(event)
    return out


async def test_stream_n_chunks_in_order(serve: Serve) -> None:
    s = await serve()
    events = await collect(s.stub.SendStreamingMessage(send_request("stream 4")))
    assert kinds(events) == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"] + [
        "artifact_update"] * 4 + ["TASK_STATE_COMPLETED"]
    chunks = [e.artifact_update for e in events if e.HasField("artifact_update")]
    assert [c.artifact.parts[0].text for c in chunks] == [f"chunk {i}/4" for i in range(1, 5)]
    assert [c.append for c in chunks] == [False, True, True, True]
    assert [c.last_chunk for c in chunks] == [False, False, False, True]
    assert len({c.artifact.artifact_id for c in chunks}) == 1
    task_id = events[0].task.id
    assert all(e.status_update.task_id == task_id for e in events if e.HasField("status_update"))
    final = await s.stub.GetTask(pb.GetTaskRequest(id=task_id))
    assert [p.text for p in final.artifacts[0].parts] == [f"chunk {i}/4" for i in range(1, 5)]


async def test_stream_of_a_direct_reply_is_one_message(serve: Serve) -> None:
    s = await serve()
    events = await collect(s.stub.SendStreamingMessage(send_request("reply yo")))
    assert kinds(events) == ["message"] and events[0].message.parts[0].text == "yo"


async def test_stream_closes_on_interrupted_state_and_resumes_with_the_answer(
    serve: Serve,
) -> None:
    s = await serve()
    first = await collect(s.stub.SendStreamingMessage(send_request("ask")))
    assert kinds(first) == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_INPUT_REQUIRED"]
    task_id = first[0].task.id
    second = await collect(s.stub.SendStreamingMessage(send_request("red", task_id=task_id)))
    # The follow-up stream opens with the task (now holding the answer), then its events.
    assert kinds(second) == ["task:TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING",
                             "artifact_update", "TASK_STATE_COMPLETED"]
    assert second[0].task.history[-1].parts[0].text == "red"


async def test_stream_errors_come_before_the_first_event(serve: Serve) -> None:
    s = await serve()
    seen = await stream_fails(s.stub.SendStreamingMessage(send_request("x", task_id="nope")))
    assert seen.reason == "TASK_NOT_FOUND"
    seen = await stream_fails(s.stub.SendStreamingMessage(pb.SendMessageRequest()))
    assert seen.reason == "INVALID_PARAMS"


async def test_streaming_off_means_unsupported_operation(serve: Serve) -> None:
    s = await serve(streaming=False)
    seen = await stream_fails(s.stub.SendStreamingMessage(send_request("x")))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "UNSUPPORTED_OPERATION")
    seen = await stream_fails(s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id="x")))
    assert seen.reason == "UNSUPPORTED_OPERATION"
    # Unary sends still work.
    assert (await s.stub.SendMessage(send_request("x"))).task.status.state == \
        pb.TASK_STATE_COMPLETED


def stepper() -> tuple[ScriptedAgent, list[Gate]]:
    """An agent that emits one WORKING note per opened gate, then completes."""
    gates = [Gate() for _ in range(4)]

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working("start")
        for i, gate in enumerate(gates):
            await gate.wait()
            await ev.working(f"step {i}")
        await ev.complete("done")

    return ScriptedAgent(script), gates


async def start_stepper(serve: Serve) -> tuple[object, list[Gate], str]:
    agent, gates = stepper()
    s = await serve(agent)
    resp = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("go"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    await asyncio.wait_for(gates[0].reached.wait(), 5)
    return s, gates, resp.task.id


async def test_subscribers_get_the_task_first_then_the_same_events(serve: Serve) -> None:
    s, gates, task_id = await start_stepper(serve)
    a = s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id))  # type: ignore[attr-defined]
    b = s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id))  # type: ignore[attr-defined]
    first_a, first_b = await a.read(), await b.read()
    assert first_a.task.status.state == first_b.task.status.state == pb.TASK_STATE_WORKING
    for g in gates:
        g.open()
    rest_a, rest_b = await collect(a), await collect(b)
    assert kinds(rest_a) == kinds(rest_b) == ["TASK_STATE_WORKING"] * 4 + ["TASK_STATE_COMPLETED"]
    assert rest_a == rest_b
    assert [e.status_update.status.message.parts[0].text for e in rest_a[:4]] == [
        f"step {i}" for i in range(4)]


async def test_one_subscriber_hanging_up_does_not_disturb_another(serve: Serve) -> None:
    s, gates, task_id = await start_stepper(serve)
    stays = s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id))  # type: ignore[attr-defined]
    leaves = s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=task_id))  # type: ignore[attr-defined]
    await stays.read(), await leaves.read()
    gates[0].open()
    assert (await leaves.read()).status_update.status.message.parts[0].text == "step 0"
    leaves.cancel()  # the client hangs up mid-stream
    bus = s.handler.bus  # type: ignore[attr-defined]
    for _ in range(100):
        if bus.subscriber_count(task_id) == 1:
            break
        await asyncio.sleep(0.01)
    assert bus.subscriber_count(task_id) == 1  # the server let go of the dropped stream
    for g in gates[1:]:
        g.open()
    rest = await collect(stays)
    assert kinds(rest) == ["TASK_STATE_WORKING"] * 4 + ["TASK_STATE_COMPLETED"]
    for _ in range(100):
        if bus.subscriber_count(task_id) == 0:
            break
        await asyncio.sleep(0.01)
    assert bus.subscriber_count(task_id) == 0


async def test_cancel_during_a_stream_ends_it_with_canceled(serve: Serve) -> None:
    s = await serve()
    stream = s.stub.SendStreamingMessage(send_request("slow 60"))
    first = await stream.read()
    assert first.task.status.state == pb.TASK_STATE_SUBMITTED
    assert (await stream.read()).status_update.status.state == pb.TASK_STATE_WORKING
    await s.stub.CancelTask(pb.CancelTaskRequest(id=first.task.id))
    rest = await collect(stream)
    assert kinds(rest) == ["TASK_STATE_CANCELED"]


async def test_a_stream_client_hanging_up_does_not_stop_the_task(serve: Serve) -> None:
    s = await serve()
    stream = s.stub.SendStreamingMessage(send_request("stream 3"))
    first = await stream.read()
    stream.cancel()
    for _ in range(200):
        task = await s.stub.GetTask(pb.GetTaskRequest(id=first.task.id))
        if task.status.state == pb.TASK_STATE_COMPLETED:
            break
        await asyncio.sleep(0.01)
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert len(task.artifacts[0].parts) == 3


async def test_subscribe_to_an_interrupted_task_waits_for_the_answer(serve: Serve) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    sub = s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=asked.id))
    assert (await sub.read()).task.status.state == pb.TASK_STATE_INPUT_REQUIRED
    await s.stub.SendMessage(send_request("green", task_id=asked.id))
    rest = await collect(sub)
    assert kinds(rest) == ["task:TASK_STATE_INPUT_REQUIRED", "TASK_STATE_WORKING",
                           "artifact_update", "TASK_STATE_COMPLETED"]


async def test_subscribe_errors(serve: Serve) -> None:
    s = await serve()
    done = (await s.stub.SendMessage(send_request("x"))).task
    seen = await stream_fails(s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id=done.id)))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "UNSUPPORTED_OPERATION")
    seen = await stream_fails(s.stub.SubscribeToTask(pb.SubscribeToTaskRequest(id="nope")))
    assert seen.reason == "TASK_NOT_FOUND"
    assert s.handler.bus.subscriber_count(done.id) == 0
    assert (await fails(s.stub.GetTask(pb.GetTaskRequest(id="nope")))).reason == "TASK_NOT_FOUND"


async def test_many_concurrent_streams_each_get_their_own_task(serve: Serve) -> None:
    s = await serve()
    runs = await asyncio.gather(*(
        collect(s.stub.SendStreamingMessage(send_request(f"stream {n}"))) for n in range(1, 21)))
    for n, events in enumerate(runs, start=1):
        chunks = [e for e in events if e.HasField("artifact_update")]
        assert [c.artifact_update.artifact.parts[0].text for c in chunks] == [
            f"chunk {i}/{n}" for i in range(1, n + 1)]
        assert kinds(events)[-1] == "TASK_STATE_COMPLETED"
