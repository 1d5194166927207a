"""GetTask, ListTasks and CancelTask over a real gRPC channel."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Serve, send_request, user_message
from tests.fakes import ScriptedAgent
from tests.grpc_errors import fails


async def make_tasks(s: object, texts: list[str], **kw: str) -> list[pb.Task]:
    out = []
    for t in texts:
        out.append((await s.stub.SendMessage(send_request(t, **kw))).task)  # type: ignore[attr-defined]
    return out


async def test_get_unknown_task(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.GetTask(pb.GetTaskRequest(id="missing")))
    assert (seen.code, seen.reason) == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")
    seen = await fails(s.stub.GetTask(pb.GetTaskRequest()))
    assert (seen.reason, seen.fields) == ("INVALID_PARAMS", ["id"])


async def test_tasks_are_scoped_to_their_tenant(serve: Serve) -> None:
    s = await serve()
    req = send_request("mine")
    req.tenant = "acme"
    task = (await s.stub.SendMessage(req)).task
    assert (await s.stub.GetTask(pb.GetTaskRequest(tenant="acme", id=task.id))).id == task.id
    for tenant in ("", "other"):
        seen = await fails(s.stub.GetTask(pb.GetTaskRequest(tenant=tenant, id=task.id)))
        assert seen.reason == "TASK_NOT_FOUND"
        assert (await s.stub.ListTasks(pb.ListTasksRequest(tenant=tenant))).total_size == 0
        seen = await fails(s.stub.SendMessage(
            pb.SendMessageRequest(tenant=tenant, message=user_message("x", task_id=task.id))))
        assert seen.reason == "TASK_NOT_FOUND"


async def test_list_pages_newest_first_without_gaps_or_repeats(serve: Serve) -> None:
    s = await serve()
    made = await make_tasks(s, [f"t{i}" for i in range(7)])
    seen: list[pb.Task] = []
    token = ""
    pages = 0
    while True:
        page = await s.stub.ListTasks(pb.ListTasksRequest(page_size=3, page_token=token))
        pages += 1
        assert page.page_size == 3 and page.total_size == 7
        seen.extend(page.tasks)
        token = page.next_page_token
        if not token:
            break
    assert pages == 3
    assert [t.id for t in seen] == [t.id for t in reversed(made)]
    stamps = [t.status.timestamp.ToNanoseconds() for t in seen]
    assert stamps == sorted(stamps, reverse=True)


async def test_last_page_has_an_empty_token_present(serve: Serve) -> None:
    s = await serve()
    await make_tasks(s, ["a"])
    page = await s.stub.ListTasks(pb.ListTasksRequest())
    assert page.next_page_token == "" and page.page_size == 50 and len(page.tasks) == 1


async def test_list_filters(serve: Serve) -> None:
    s = await serve()
    (a,) = await make_tasks(s, ["a"], context_id="c-a")
    await make_tasks(s, ["b"], context_id="c-b")
    asked = (await s.stub.SendMessage(send_request("ask", context_id="c-a"))).task
    by_ctx = await s.stub.ListTasks(pb.ListTasksRequest(context_id="c-a"))
    assert {t.id for t in by_ctx.tasks} == {a.id, asked.id}
    by_state = await s.stub.ListTasks(pb.ListTasksRequest(status=pb.TASK_STATE_INPUT_REQUIRED))
    assert [t.id for t in by_state.tasks] == [asked.id]
    after = Timestamp()
    after.FromNanoseconds(asked.status.timestamp.ToNanoseconds())
    recent = await s.stub.ListTasks(pb.ListTasksRequest(status_timestamp_after=after))
    assert [t.id for t in recent.tasks] == [asked.id]  # ">=": the boundary is included
    both = await s.stub.ListTasks(pb.ListTasksRequest(context_id="c-a",
                                                      status=pb.TASK_STATE_COMPLETED))
    assert [t.id for t in both.tasks] == [a.id]


async def test_list_omits_artifacts_unless_asked_and_trims_history(serve: Serve) -> None:
    s = await serve()
    await make_tasks(s, ["a"])
    plain = (await s.stub.ListTasks(pb.ListTasksRequest())).tasks[0]
    assert len(plain.artifacts) == 0 and len(plain.history) == 1
    full = (await s.stub.ListTasks(pb.ListTasksRequest(include_artifacts=True,
                                                       history_length=0))).tasks[0]
    assert full.artifacts[0].parts[0].text == "echo: a" and len(full.history) == 0


@pytest.mark.parametrize("req", [
    pb.ListTasksRequest(page_size=0), pb.ListTasksRequest(page_size=101),
    pb.ListTasksRequest(page_token="not-ours"), pb.ListTasksRequest(history_length=-2),
])
async def test_bad_list_requests_are_invalid_params(serve: Serve, req: pb.ListTasksRequest) -> None:
    s = await serve()
    seen = await fails(s.stub.ListTasks(req))
    assert (seen.code, seen.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS")


async def test_cancel_a_working_task_then_again(serve: Serve) -> None:
    s = await serve()
    resp = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("slow 60"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    first = await s.stub.CancelTask(pb.CancelTaskRequest(id=resp.task.id))
    assert first.status.state == pb.TASK_STATE_CANCELED
    again = await fails(s.stub.CancelTask(pb.CancelTaskRequest(id=resp.task.id)))
    assert again.reason == "TASK_NOT_CANCELABLE"  # §3.1.5: already canceled
    await asyncio.sleep(0.1)
    got = await s.stub.GetTask(pb.GetTaskRequest(id=resp.task.id))
    assert got.status.state == pb.TASK_STATE_CANCELED  # the agent wrote nothing after


async def test_cancel_an_interrupted_task(serve: Serve) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    canceled = await s.stub.CancelTask(pb.CancelTaskRequest(id=asked.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED
    seen = await fails(s.stub.SendMessage(send_request("late answer", task_id=asked.id)))
    assert seen.reason == "UNSUPPORTED_OPERATION"


@pytest.mark.parametrize("text", ["hello", "reject"])
async def test_final_tasks_are_not_cancelable(serve: Serve, text: str) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await (ev.reject("no") if ctx.text == "reject" else ev.complete("ok"))

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request(text))).task
    seen = await fails(s.stub.CancelTask(pb.CancelTaskRequest(id=task.id)))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "TASK_NOT_CANCELABLE")


async def test_cancel_unknown_task(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.CancelTask(pb.CancelTaskRequest(id="nope")))
    assert seen.reason == "TASK_NOT_FOUND"


async def test_an_agent_may_finish_cancellation_its_own_way(serve: Serve) -> None:
    stop = asyncio.Event()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await stop.wait()

    async def on_cancel(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.cancel("stopped by request; partial results kept")
        stop.set()

    agent = ScriptedAgent(script, on_cancel)
    s = await serve(agent)
    resp = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("x"), configuration=pb.SendMessageConfiguration(
            return_immediately=True)))
    done = await s.stub.CancelTask(pb.CancelTaskRequest(id=resp.task.id))
    assert agent.cancelled == [resp.task.id]
    assert done.status.message.parts[0].text == "stopped by request; partial results kept"


async def test_blocking_sender_gets_the_canceled_task(serve: Serve) -> None:
    s = await serve()
    pending = asyncio.ensure_future(s.stub.SendMessage(send_request("slow 60")))
    for _ in range(100):
        tasks = (await s.stub.ListTasks(pb.ListTasksRequest())).tasks
        if tasks:
            break
        await asyncio.sleep(0.02)
    await s.stub.CancelTask(pb.CancelTaskRequest(id=tasks[0].id))
    resp = await asyncio.wait_for(pending, 5)
    assert resp.task.status.state == pb.TASK_STATE_CANCELED
