"""One list of scenarios, run over gRPC, JSON-RPC and REST (spec §5.1: the
bindings are functionally equivalent). Same answers, same §5.4 errors; each
binding's own error code is checked against the one error table."""

from __future__ import annotations

import asyncio

import pytest
from google.protobuf.timestamp_pb2 import Timestamp
from google.rpc import code_pb2

from a2a_grpc.core import errors
from a2a_grpc.generated import a2a_pb2 as pb
from tests.agents import HandOffAgent, card_for_handoff
from tests.bindings import Binding, CallFailed
from tests.conftest import GatewayFactory, Stack, StackFactory, send_request, user_message
from tests.webhook import start_webhook

BINDINGS = ["grpc", "jsonrpc", "rest"]
# Gateway mode: JSON-RPC and REST here, our gRPC server in another process.
GATEWAY = ["gateway-jsonrpc", "gateway-rest"]
REASONS = {w.reason: w for w in errors.WIRE.values()}


@pytest.fixture(params=BINDINGS + GATEWAY)
async def b(request: pytest.FixtureRequest, stack: StackFactory,
            gateway: GatewayFactory) -> Binding:
    name: str = request.param
    if name.startswith("gateway-"):
        return (await gateway()).binding(name.removeprefix("gateway-"))
    return (await stack()).binding(name)


async def fails(b: Binding, reason: str, call: object) -> CallFailed:
    with pytest.raises(CallFailed) as info:
        await call  # type: ignore[misc]
    err = info.value
    wire = REASONS[reason]
    expected = {"grpc": code_pb2.Code.Name(wire.grpc), "jsonrpc": wire.jsonrpc,
                "rest": wire.http}[b.name]
    code = err.code.name if b.name == "grpc" else err.code
    assert (err.reason, code) == (reason, expected), err.message
    return err


def kinds(events: list[pb.StreamResponse]) -> list[str]:
    out = []
    for e in events:
        kind = e.WhichOneof("payload") or ""
        if kind == "status_update":
            kind = pb.TaskState.Name(e.status_update.status.state)
        elif kind == "task":
            kind = "task:" + pb.TaskState.Name(e.task.status.state)
        out.append(kind)
    return out


async def test_send_and_get(b: Binding) -> None:
    resp = await b.call("SendMessage", send_request("hello"))
    task = resp.task  # type: ignore[attr-defined]
    assert task.status.state == pb.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "echo: hello"
    got = await b.call("GetTask", pb.GetTaskRequest(id=task.id, history_length=0))
    assert got.id == task.id and len(got.history) == 0  # type: ignore[attr-defined]
    await fails(b, "TASK_NOT_FOUND", b.call("GetTask", pb.GetTaskRequest(id="nope")))


async def test_reply(b: Binding) -> None:
    resp = await b.call("SendMessage", send_request("reply hi"))
    assert resp.message.parts[0].text == "hi"  # type: ignore[attr-defined]


async def test_multi_turn(b: Binding) -> None:
    asked = (await b.call("SendMessage", send_request("ask"))).task  # type: ignore[attr-defined]
    assert asked.status.state == pb.TASK_STATE_INPUT_REQUIRED
    done = (await b.call("SendMessage", send_request("7", task_id=asked.id))).task  # type: ignore[attr-defined]
    assert (done.status.state, done.context_id) == (pb.TASK_STATE_COMPLETED, asked.context_id)
    await fails(b, "UNSUPPORTED_OPERATION",
                b.call("SendMessage", send_request("again", task_id=asked.id)))
    await fails(b, "INVALID_PARAMS", b.call("SendMessage", send_request(
        "x", task_id=(await b.call("SendMessage", send_request("ask"))).task.id,  # type: ignore[attr-defined]
        context_id="wrong")))


async def test_stream(b: Binding) -> None:
    events = await b.stream("SendStreamingMessage", send_request("stream 3"))
    assert kinds(events) == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING",
                             "artifact_update", "artifact_update", "artifact_update",
                             "TASK_STATE_COMPLETED"]
    assert [e.artifact_update.last_chunk for e in events[2:5]] == [False, False, True]
    events = await b.stream("SendStreamingMessage", send_request("reply r"))
    assert kinds(events) == ["message"]
    await fails(b, "TASK_NOT_FOUND",
                b.stream("SendStreamingMessage", send_request("x", task_id="nope")))


async def test_list_with_filters_and_pages(b: Binding) -> None:
    for i in range(3):
        await b.call("SendMessage", send_request(f"t{i}", context_id="ctx"))
    asked = (await b.call("SendMessage", send_request("ask", context_id="ctx"))).task  # type: ignore[attr-defined]
    page = await b.call("ListTasks", pb.ListTasksRequest(context_id="ctx", page_size=3))
    assert (len(page.tasks), page.total_size, page.page_size) == (3, 4, 3)  # type: ignore[attr-defined]
    assert page.tasks[0].id == asked.id and not page.tasks[0].artifacts  # type: ignore[attr-defined]
    last = await b.call("ListTasks", pb.ListTasksRequest(
        context_id="ctx", page_size=3, page_token=page.next_page_token,  # type: ignore[attr-defined]
        include_artifacts=True))
    assert len(last.tasks) == 1 and last.next_page_token == ""  # type: ignore[attr-defined]
    assert last.tasks[0].artifacts[0].parts[0].text == "echo: t0"  # type: ignore[attr-defined]
    waiting = await b.call("ListTasks", pb.ListTasksRequest(status=pb.TASK_STATE_INPUT_REQUIRED))
    assert [t.id for t in waiting.tasks] == [asked.id]  # type: ignore[attr-defined]
    after = Timestamp()
    after.CopyFrom(asked.status.timestamp)
    recent = await b.call("ListTasks", pb.ListTasksRequest(status_timestamp_after=after))
    assert [t.id for t in recent.tasks] == [asked.id]  # type: ignore[attr-defined]
    await fails(b, "INVALID_PARAMS", b.call("ListTasks", pb.ListTasksRequest(page_size=500)))
    await fails(b, "INVALID_PARAMS", b.call("ListTasks", pb.ListTasksRequest(page_token="x")))


async def test_cancel(b: Binding) -> None:
    slow = (await b.call("SendMessage", pb.SendMessageRequest(
        message=user_message("slow 60"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))).task  # type: ignore[attr-defined]
    canceled = await b.call("CancelTask", pb.CancelTaskRequest(id=slow.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED  # type: ignore[attr-defined]
    # §3.1.5: "already completed, failed, or canceled" is TaskNotCancelable.
    await fails(b, "TASK_NOT_CANCELABLE", b.call("CancelTask", pb.CancelTaskRequest(id=slow.id)))
    done = (await b.call("SendMessage", send_request("x"))).task  # type: ignore[attr-defined]
    await fails(b, "TASK_NOT_CANCELABLE", b.call("CancelTask", pb.CancelTaskRequest(id=done.id)))
    await fails(b, "TASK_NOT_FOUND", b.call("CancelTask", pb.CancelTaskRequest(id="nope")))


async def test_subscribe_then_cancel(b: Binding) -> None:
    slow = (await b.call("SendMessage", pb.SendMessageRequest(
        message=user_message("slow 60"),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))).task  # type: ignore[attr-defined]
    watching = asyncio.ensure_future(
        b.stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=slow.id)))
    await asyncio.sleep(0.2)
    await b.call("CancelTask", pb.CancelTaskRequest(id=slow.id))
    events = await asyncio.wait_for(watching, 10)
    assert kinds(events)[0] == "task:TASK_STATE_WORKING"
    assert kinds(events)[-1] == "TASK_STATE_CANCELED"
    await fails(b, "UNSUPPORTED_OPERATION",
                b.stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=slow.id)))


async def test_push_config_crud(b: Binding) -> None:
    task = (await b.call("SendMessage", send_request("x"))).task  # type: ignore[attr-defined]
    made = await b.call("CreateTaskPushNotificationConfig", pb.TaskPushNotificationConfig(
        task_id=task.id, url="https://hooks.example.com/a2a", token="t"))
    assert made.id and made.task_id == task.id  # type: ignore[attr-defined]
    got = await b.call("GetTaskPushNotificationConfig", pb.GetTaskPushNotificationConfigRequest(
        task_id=task.id, id=made.id))  # type: ignore[attr-defined]
    assert got == made
    listed = await b.call("ListTaskPushNotificationConfigs",
                          pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    assert list(listed.configs) == [made]  # type: ignore[attr-defined]
    for _ in range(2):
        await b.call("DeleteTaskPushNotificationConfig", pb.DeleteTaskPushNotificationConfigRequest(
            task_id=task.id, id=made.id))  # type: ignore[attr-defined]
    await fails(b, "TASK_NOT_FOUND", b.call("GetTaskPushNotificationConfig",
                pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)))  # type: ignore[attr-defined]


async def test_validation_errors(b: Binding) -> None:
    msg = user_message("x")
    msg.ClearField("role")
    err = await fails(b, "INVALID_PARAMS",
                      b.call("SendMessage", pb.SendMessageRequest(message=msg)))
    assert "message.role" in err.message
    await fails(b, "INVALID_PARAMS",
                b.call("GetTask", pb.GetTaskRequest(id="x", history_length=-1)))


async def test_the_extended_card(b: Binding) -> None:
    card = await b.call("GetExtendedAgentCard", pb.GetExtendedAgentCardRequest())
    assert "whoami" in [s.id for s in card.skills]  # type: ignore[attr-defined]
    assert "made for anonymous" in card.description  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", BINDINGS)
async def test_push_and_streaming_off(stack: StackFactory, name: str) -> None:
    b = (await stack(push=False, streaming=False)).binding(name)
    await fails(b, "UNSUPPORTED_OPERATION", b.stream("SendStreamingMessage", send_request("x")))
    await fails(b, "PUSH_NOTIFICATION_NOT_SUPPORTED",
                b.call("ListTaskPushNotificationConfigs",
                       pb.ListTaskPushNotificationConfigsRequest(task_id="x")))


@pytest.mark.parametrize("name", BINDINGS)
async def test_versions_and_extensions(stack: StackFactory, name: str) -> None:
    uri = "https://example.com/ext/v1"
    card = pb.AgentCard(name="x", description="x", version="1",
                        capabilities=pb.AgentCapabilities(streaming=True))
    card.capabilities.extensions.add(uri=uri, required=True)
    s = await stack(card=card)
    old = s.binding(name, {"A2A-Version": "0.3", "A2A-Extensions": uri})
    await fails(old, "VERSION_NOT_SUPPORTED", old.call("GetTask", pb.GetTaskRequest(id="x")))
    bare = s.binding(name, {"A2A-Version": "1.0"})
    await fails(bare, "EXTENSION_SUPPORT_REQUIRED", bare.call("GetTask", pb.GetTaskRequest(id="x")))
    ok = s.binding(name, {"A2A-Version": "1.0", "A2A-Extensions": f"{uri}, other"})
    await fails(ok, "TASK_NOT_FOUND", ok.call("GetTask", pb.GetTaskRequest(id="x")))


@pytest.mark.parametrize("name", BINDINGS)
async def test_tenants(stack: StackFactory, name: str) -> None:
    b = (await stack()).binding(name)
    req = send_request("mine")
    req.tenant = "acme"
    task = (await b.call("SendMessage", req)).task  # type: ignore[attr-defined]
    got = await b.call("GetTask", pb.GetTaskRequest(tenant="acme", id=task.id))
    assert got.id == task.id  # type: ignore[attr-defined]
    await fails(b, "TASK_NOT_FOUND", b.call("GetTask", pb.GetTaskRequest(id=task.id)))
    listed = await b.call("ListTasks", pb.ListTasksRequest(tenant="acme"))
    assert listed.total_size == 1  # type: ignore[attr-defined]


# -- hand-off and follow-ups (spec §3.3.3, §3.4.3): the same on every binding --


async def handoff_stack(stack: StackFactory, name: str, **kw: bool) -> tuple[Stack, Binding,
                                                                             HandOffAgent]:
    agent = HandOffAgent()
    s = await stack(agent, card=card_for_handoff(), **kw)
    return s, s.binding(name), agent


async def send_now(b: Binding, text: str, task_id: str = "") -> pb.Task:
    """SendMessage with returnImmediately: the task as soon as it exists."""
    resp = await b.call("SendMessage", pb.SendMessageRequest(
        message=user_message(text, task_id=task_id),
        configuration=pb.SendMessageConfiguration(return_immediately=True)))
    return resp.task  # type: ignore[attr-defined,no-any-return]


def texts(task: pb.Task) -> list[str]:
    return [p.text for a in task.artifacts for p in a.parts]


@pytest.mark.parametrize("name", BINDINGS)
async def test_hand_off_then_completion_from_outside_the_run(stack: StackFactory,
                                                             name: str) -> None:
    s, b, _ = await handoff_stack(stack, name, sender=True)
    hook = await start_webhook()
    try:
        config = pb.SendMessageConfiguration()
        config.task_push_notification_config.url = hook.url("/done")
        sent = (await b.call("SendMessage", pb.SendMessageRequest(
            message=user_message("handoff"), configuration=config))).task  # type: ignore[attr-defined]
        assert sent.status.state == pb.TASK_STATE_WORKING  # the blocking send returned
        watching = asyncio.ensure_future(
            b.stream("SubscribeToTask", pb.SubscribeToTaskRequest(id=sent.id)))
        await until_subscribed(s, sent.id)
        events = await s.handler.task_events(sent.id)  # a webhook, a queue, a timer...
        await events.artifact("made later", name="result")
        await events.complete("finished outside the run")
        seen = await asyncio.wait_for(watching, 10)
        assert kinds(seen) == ["task:TASK_STATE_WORKING", "artifact_update",
                               "TASK_STATE_COMPLETED"]
        got = await b.call("GetTask", pb.GetTaskRequest(id=sent.id))
        assert texts(got) == ["made later"]  # type: ignore[arg-type]
        hits = await hook.wait_for("/done", 3)
        assert hits[-1].event.status_update.status.state == pb.TASK_STATE_COMPLETED
    finally:
        await hook.server.close()


async def until_subscribed(s: Stack, task_id: str) -> None:
    for _ in range(1000):  # the subscription is made on another connection
        if s.handler.bus.subscriber_count(task_id):
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"nobody subscribed to {task_id}")


@pytest.mark.parametrize("name", BINDINGS)
async def test_a_handed_off_runs_stream_ends_after_its_last_event(stack: StackFactory,
                                                                  name: str) -> None:
    _, b, _ = await handoff_stack(stack, name)
    events = await asyncio.wait_for(b.stream("SendStreamingMessage", send_request("handoff")), 10)
    assert kinds(events) == ["task:TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]


@pytest.mark.parametrize("name", BINDINGS)
async def test_a_follow_up_during_an_active_run_reaches_the_agent(stack: StackFactory,
                                                                  name: str) -> None:
    _, b, _ = await handoff_stack(stack, name)
    listening = await send_now(b, "listen")
    first = await send_now(b, "one", listening.id)
    assert first.history[-1].parts[0].text == "one"  # in the history at once
    streamed = await asyncio.wait_for(
        b.stream("SendStreamingMessage", send_request("done", task_id=listening.id)), 10)
    assert kinds(streamed)[0].startswith("task:") and kinds(streamed)[-1] == "TASK_STATE_COMPLETED"
    got = await b.call("GetTask", pb.GetTaskRequest(id=listening.id))
    assert texts(got) == ["got: one", "got: done"]  # type: ignore[arg-type]
    user_texts = [m.parts[0].text for m in got.history if m.role == pb.ROLE_USER]  # type: ignore[attr-defined]
    assert user_texts == ["listen", "one", "done"]


@pytest.mark.parametrize("name", BINDINGS)
async def test_a_follow_up_not_taken_runs_after_the_active_run(stack: StackFactory,
                                                               name: str) -> None:
    _, b, agent = await handoff_stack(stack, name)
    held = await send_now(b, "hold")
    await asyncio.wait_for(agent.holding.wait(), 10)
    waiting = asyncio.ensure_future(b.call("SendMessage", send_request("next", task_id=held.id)))
    await asyncio.sleep(0.05)
    assert not waiting.done()  # queued behind the active run
    agent.release()
    done = (await asyncio.wait_for(waiting, 10)).task  # type: ignore[attr-defined]
    assert done.status.state == pb.TASK_STATE_COMPLETED
    assert texts(done) == ["later: next"]


@pytest.mark.parametrize("name", BINDINGS)
async def test_follow_ups_on_working_tasks_and_the_stricter_option(stack: StackFactory,
                                                                   name: str) -> None:
    _, b, _ = await handoff_stack(stack, name)
    sent = (await b.call("SendMessage", send_request("handoff"))).task  # type: ignore[attr-defined]
    done = (await b.call("SendMessage", send_request("finish", task_id=sent.id))).task  # type: ignore[attr-defined]
    assert (done.status.state, texts(done)) == (pb.TASK_STATE_COMPLETED, ["later: finish"])
    await fails(b, "UNSUPPORTED_OPERATION",
                b.call("SendMessage", send_request("too late", task_id=sent.id)))
    await fails(b, "TASK_NOT_CANCELABLE", b.call("CancelTask", pb.CancelTaskRequest(id=sent.id)))
    strict = await stack(HandOffAgent(), card=card_for_handoff(), interrupted_only=True)
    sb = strict.binding(name)
    working = (await sb.call("SendMessage", send_request("handoff"))).task  # type: ignore[attr-defined]
    await fails(sb, "UNSUPPORTED_OPERATION",
                sb.call("SendMessage", send_request("more", task_id=working.id)))


@pytest.mark.parametrize("name", BINDINGS)
async def test_double_cancel_of_a_handed_off_task(stack: StackFactory, name: str) -> None:
    _, b, _ = await handoff_stack(stack, name)
    sent = (await b.call("SendMessage", send_request("handoff"))).task  # type: ignore[attr-defined]
    canceled = await b.call("CancelTask", pb.CancelTaskRequest(id=sent.id))
    assert canceled.status.state == pb.TASK_STATE_CANCELED  # type: ignore[attr-defined]
    await fails(b, "TASK_NOT_CANCELABLE", b.call("CancelTask", pb.CancelTaskRequest(id=sent.id)))
