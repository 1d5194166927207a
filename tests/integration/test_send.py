"""SendMessage over a real gRPC channel: tasks, replies, multi-turn, errors."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.core.errors import ContentTypeNotSupportedError
from a2a_grpc.core.lifecycle import IllegalTransitionError
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Serve, send_request, user_message
from tests.fakes import Gate, ScriptedAgent
from tests.grpc_errors import fails

COMPLETED, WORKING = pb.TASK_STATE_COMPLETED, pb.TASK_STATE_WORKING


def is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True


async def test_text_becomes_a_completed_task_with_an_echo(serve: Serve) -> None:
    s = await serve()
    req = send_request("hello there")
    resp = await s.stub.SendMessage(req)
    task = resp.task
    assert task.status.state == COMPLETED
    assert is_uuid(task.id) and is_uuid(task.context_id)
    assert [p.text for a in task.artifacts for p in a.parts] == ["echo: hello there"]
    assert task.history[0].message_id == req.message.message_id
    assert (task.history[0].task_id, task.history[0].context_id) == (task.id, task.context_id)
    assert task.status.timestamp.seconds > 0
    assert await s.stub.GetTask(pb.GetTaskRequest(id=task.id)) == task


async def test_client_context_id_is_kept_and_ids_are_fresh(serve: Serve) -> None:
    s = await serve()
    a = await s.stub.SendMessage(send_request("one", context_id="ctx-1"))
    b = await s.stub.SendMessage(send_request("two", context_id="ctx-1"))
    assert a.task.context_id == b.task.context_id == "ctx-1"
    assert a.task.id != b.task.id


async def test_reply_is_a_direct_message_and_creates_no_task(serve: Serve) -> None:
    s = await serve()
    resp = await s.stub.SendMessage(send_request("reply hi", context_id="c9"))
    assert resp.WhichOneof("payload") == "message"
    assert resp.message.role == pb.ROLE_AGENT
    assert resp.message.parts[0].text == "hi"
    assert resp.message.context_id == "c9" and not resp.message.task_id
    listed = await s.stub.ListTasks(pb.ListTasksRequest())
    assert listed.total_size == 0


async def test_ask_then_answer_on_the_same_task(serve: Serve) -> None:
    s = await serve()
    first = (await s.stub.SendMessage(send_request("ask"))).task
    assert first.status.state == pb.TASK_STATE_INPUT_REQUIRED
    assert first.status.message.parts[0].text == "What is your answer?"
    # Only taskId: the context is inferred from the task (§3.4.2).
    second = (await s.stub.SendMessage(send_request("blue", task_id=first.id))).task
    assert (second.id, second.context_id) == (first.id, first.context_id)
    assert second.status.state == COMPLETED
    assert second.artifacts[0].parts[0].text == "answer: blue"
    texts = [m.parts[0].text for m in second.history]
    assert texts == ["ask", "What is your answer?", "blue"]
    assert second.history[2].context_id == first.context_id


async def test_terminal_tasks_are_immutable(serve: Serve) -> None:
    s = await serve()
    done = (await s.stub.SendMessage(send_request("x"))).task
    seen = await fails(s.stub.SendMessage(send_request("again", task_id=done.id)))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "UNSUPPORTED_OPERATION")
    assert "completed" in seen.message
    after = await s.stub.GetTask(pb.GetTaskRequest(id=done.id))
    assert after == done  # the refused message left no trace


async def test_unknown_task_id_is_task_not_found(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.SendMessage(send_request("x", task_id="no-such-task")))
    assert (seen.code, seen.reason) == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")


async def test_mismatching_context_is_invalid_params(serve: Serve) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    seen = await fails(s.stub.SendMessage(send_request("x", task_id=asked.id, context_id="other")))
    assert (seen.code, seen.reason, seen.fields) == (
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS", ["message.contextId"])


async def test_a_working_task_takes_a_second_message_after_its_run(serve: Serve) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        if ctx.task is None:
            await ev.working()
            await gate.wait()
            await ev.hand_off()
        else:
            await ev.complete(f"then: {ctx.text}")

    s = await serve(ScriptedAgent(script))
    slow = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("first"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    await gate.reached.wait()
    second = asyncio.ensure_future(s.stub.SendMessage(send_request("hurry", task_id=slow.task.id)))

    def said(task: pb.Task) -> list[str]:
        return [m.parts[0].text for m in task.history if m.role == pb.ROLE_USER]

    # The blocking follow-up answers only when its turn ends: what shows it was
    # recorded is the task's history (polled: the call has nothing to wait on).
    for _ in range(200):
        if said(await s.stub.GetTask(pb.GetTaskRequest(id=slow.task.id))) == ["first", "hurry"]:
            break
        await asyncio.sleep(0.05)
    third = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("and this", task_id=slow.task.id),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    assert said(third.task) == ["first", "hurry", "and this"]  # recorded at once, in order
    gate.open()
    done = (await second).task
    assert done.status.state == COMPLETED and done.status.message.parts[0].text == "then: hurry"
    final = await s.stub.GetTask(pb.GetTaskRequest(id=slow.task.id))
    # the third message's turn came after the task was final: it did not run
    assert final.status.message.parts[0].text == "then: hurry"


async def test_the_stricter_option_refuses_a_message_to_a_working_task(serve: Serve) -> None:
    s = await serve(interrupted_only=True)
    slow = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("slow 30"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    seen = await fails(s.stub.SendMessage(send_request("hurry", task_id=slow.task.id)))
    assert seen.reason == "UNSUPPORTED_OPERATION" and "cancel" in seen.message
    await s.stub.CancelTask(pb.CancelTaskRequest(id=slow.task.id))


async def test_an_accidental_return_fails_the_task_and_says_how_to_hand_off(
        serve: Serve, caplog: pytest.LogCaptureFixture) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request("x"))).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert "hand_off()" in caplog.text


async def test_agents_written_for_the_sdks_may_hand_off_by_returning(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()

    agent = ScriptedAgent(script)
    agent.hand_off_on_return = True
    s = await serve(agent)
    task = (await s.stub.SendMessage(send_request("x"))).task
    assert task.status.state == WORKING
    assert await s.handler.store.unsettled() == []  # a restart leaves it be


async def test_an_agent_can_answer_follow_ups_in_one_run(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.require_input("name?")
        answer = await anext(ctx.follow_ups)
        await ev.complete(f"hello {answer.parts[0].text}")

    s = await serve(ScriptedAgent(script))
    asked = (await s.stub.SendMessage(send_request("hi"))).task
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    done = (await s.stub.SendMessage(send_request("Ada", task_id=asked.id))).task
    assert done.status.state == COMPLETED and done.status.message.parts[0].text == "hello Ada"


async def test_return_immediately_answers_before_the_work_is_done(serve: Serve) -> None:
    s = await serve()
    resp = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("slow 30"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    assert resp.task.status.state in (pb.TASK_STATE_SUBMITTED, WORKING)
    got = await s.stub.GetTask(pb.GetTaskRequest(id=resp.task.id))
    assert got.status.state == WORKING
    canceled = await s.stub.CancelTask(pb.CancelTaskRequest(id=resp.task.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED


async def test_blocking_send_waits_for_the_end(serve: Serve) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await gate.wait()
        await ev.complete("done")

    s = await serve(ScriptedAgent(script))
    call = asyncio.ensure_future(s.stub.SendMessage(send_request("go")))
    await asyncio.wait_for(gate.reached.wait(), 5)
    await asyncio.sleep(0.05)
    assert not call.done()
    gate.open()
    resp = await call
    assert resp.task.status.state == COMPLETED


async def test_reference_task_ids_reach_the_agent(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.complete(",".join(t.id for t in ctx.referenced_tasks))

    agent = ScriptedAgent(script)
    s = await serve(agent)
    first = (await s.stub.SendMessage(send_request("a"))).task
    msg = user_message("b")
    msg.reference_task_ids.extend([first.id, "unknown-task"])
    second = (await s.stub.SendMessage(pb.SendMessageRequest(message=msg))).task
    assert list(agent.contexts[1].message.reference_task_ids) == [first.id, "unknown-task"]
    assert second.status.message.parts[0].text == first.id  # only the tasks that exist


@pytest.mark.parametrize(("limit", "expected"), [(None, 3), (0, 0), (1, 1), (2, 2)])
async def test_history_length_on_send_and_get(serve: Serve, limit: int | None,
                                              expected: int) -> None:
    s = await serve()
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    config = pb.SendMessageConfiguration()
    if limit is not None:
        config.history_length = limit
    done = (await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("42", task_id=asked.id), configuration=config))).task
    assert len(done.history) == expected
    get = pb.GetTaskRequest(id=asked.id)
    if limit is not None:
        get.history_length = limit
    got = await s.stub.GetTask(get)
    assert len(got.history) == expected
    if expected:
        assert got.history[-1].parts[0].text == "42"  # the most recent ones are kept


async def test_negative_history_length_is_invalid(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.GetTask(pb.GetTaskRequest(id="x", history_length=-1)))
    assert seen.reason == "INVALID_PARAMS"


@pytest.mark.parametrize(("mutate", "fields"), [
    (lambda m: m.ClearField("message_id"), ["message.messageId"]),
    (lambda m: m.ClearField("role"), ["message.role"]),
    (lambda m: m.ClearField("parts"), ["message.parts"]),
    (lambda m: m.parts.add(), ["message.parts[1]"]),
])
async def test_required_fields(serve: Serve, mutate: object, fields: list[str]) -> None:
    s = await serve()
    msg = user_message("x")
    mutate(msg)  # type: ignore[operator]
    seen = await fails(s.stub.SendMessage(pb.SendMessageRequest(message=msg)))
    assert (seen.code, seen.reason, seen.fields) == (
        grpc.StatusCode.INVALID_ARGUMENT, "INVALID_PARAMS", fields)


async def test_missing_message_is_invalid_params(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.SendMessage(pb.SendMessageRequest()))
    assert seen.fields == ["message"]


async def test_agent_crash_fails_the_task_without_leaking(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        raise RuntimeError("database password is hunter2")

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request("x"))).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert "hunter2" not in task.SerializeToString().decode("utf-8", "replace")
    assert "agent failed" in task.status.message.parts[0].text


async def test_agent_crash_before_any_event_still_leaves_a_failed_task(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        raise ValueError("boom")

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request("x"))).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert task.history[0].parts[0].text == "x"  # the client's message is kept


async def test_agent_refusal_before_any_event_is_the_callers_error(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        raise ContentTypeNotSupportedError("only text/plain, please")

    s = await serve(ScriptedAgent(script))
    seen = await fails(s.stub.SendMessage(send_request("x")))
    assert (seen.code, seen.reason, seen.message) == (
        grpc.StatusCode.INVALID_ARGUMENT, "CONTENT_TYPE_NOT_SUPPORTED", "only text/plain, please")
    assert (await s.stub.ListTasks(pb.ListTasksRequest())).total_size == 0


async def test_agent_that_returns_early_fails_the_task(serve: Serve) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request("x"))).task
    assert task.status.state == pb.TASK_STATE_FAILED
    assert "without finishing" in task.status.message.parts[0].text


async def test_illegal_transitions_are_refused_in_the_agent(serve: Serve) -> None:
    refused: list[Exception] = []

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.complete("done")
        for attempt in (ev.working(), ev.artifact("late"), ev.reply("late")):
            try:
                await attempt
            except IllegalTransitionError as exc:
                refused.append(exc)
            except Exception as exc:  # reply after task events: InvalidAgentResponse
                refused.append(exc)

    s = await serve(ScriptedAgent(script))
    task = (await s.stub.SendMessage(send_request("x"))).task
    await asyncio.sleep(0.05)
    assert task.status.state == COMPLETED and not task.artifacts
    assert len(refused) == 3
    assert "completed -> working" in str(refused[0])
    got = await s.stub.GetTask(pb.GetTaskRequest(id=task.id))
    assert got == task


async def test_too_many_parts_is_invalid_params(serve: Serve) -> None:
    s = await serve()
    msg = user_message("x")
    msg.parts.extend(pb.Part(text=str(i)) for i in range(1000))
    seen = await fails(s.stub.SendMessage(pb.SendMessageRequest(message=msg)))
    assert (seen.reason, seen.fields) == ("INVALID_PARAMS", ["message.parts"])
    assert "at most 1000" in seen.message


async def test_cancel_answers_the_follow_ups_queued_behind_the_run(serve: Serve) -> None:
    gate = Gate()

    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        await gate.wait()

    s = await serve(ScriptedAgent(script))
    first = (await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("first"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))).task
    await gate.reached.wait()
    queued = asyncio.ensure_future(s.stub.SendMessage(send_request("more", task_id=first.id)))
    for _ in range(500):  # the follow-up is in the history before it runs
        if len((await s.stub.GetTask(pb.GetTaskRequest(id=first.id))).history) == 2:
            break
        await asyncio.sleep(0.01)
    await s.stub.CancelTask(pb.CancelTaskRequest(id=first.id))
    answered = (await asyncio.wait_for(queued, 10)).task
    assert answered.status.state == pb.TASK_STATE_CANCELED
    assert [m.parts[0].text for m in answered.history if m.role == pb.ROLE_USER] == [
        "first", "more"]  # never lost, never run


async def test_writing_to_a_task_from_outside_follows_the_same_rules(serve: Serve) -> None:
    from a2a_grpc.core.errors import InvalidAgentResponseError, TaskNotFoundError

    s = await serve()
    with pytest.raises(TaskNotFoundError):
        await s.handler.task_events("no-such-task")
    done = (await s.stub.SendMessage(send_request("hello"))).task
    with pytest.raises(TaskNotFoundError):  # another owner's task is not there
        await s.handler.task_events(done.id, owner="someone else")
    events = await s.handler.task_events(done.id)
    with pytest.raises(IllegalTransitionError):
        await events.working()  # a final task takes nothing more
    with pytest.raises(InvalidAgentResponseError):
        await events.reply("only a run answering a new message may reply")
    await events.hand_off()  # nothing to let go of: no error, no change
    assert await s.stub.GetTask(pb.GetTaskRequest(id=done.id)) == done
