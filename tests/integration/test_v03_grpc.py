"""A2A 0.3's gRPC service (`a2a.v1.A2AService`) on the same server as 1.0's,
called with stubs compiled from our 0.3 proto (the official 0.3 client drives
it in tests/interop/test_sdk03.py)."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf.struct_pb2 import Struct

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub
from tests.conftest import Serve
from tests.fakes import ScriptedAgent
from tests.grpc_errors import fails


def msg(text: str, task_id: str = "", **kw: object) -> v03.Message:
    return v03.Message(message_id=f"m-{text}-{task_id}", role=v03.ROLE_USER, task_id=task_id,
                       content=[v03.Part(text=text)], **kw)  # type: ignore[arg-type]


def stub(running: object) -> A2AServiceStub:
    return A2AServiceStub(running.channel)  # type: ignore[attr-defined]


async def test_send_get_and_both_dialects_see_one_task(serve: Serve) -> None:
    s = await serve()
    old = stub(s)
    sent = await old.SendMessage(v03.SendMessageRequest(request=msg("hello")))
    task = sent.task
    assert task.status.state == v03.TASK_STATE_COMPLETED
    assert task.artifacts[0].parts[0].text == "echo: hello"
    assert task.history[0].content[0].text == "hello" and task.history[0].role == v03.ROLE_USER
    got = await old.GetTask(v03.GetTaskRequest(name=f"tasks/{task.id}"))
    assert got == task
    new = await s.stub.GetTask(pb.GetTaskRequest(id=task.id))  # the same task, in 1.0
    assert new.artifacts[0].parts[0].text == "echo: hello"
    reply = await old.SendMessage(v03.SendMessageRequest(request=msg("reply hi")))
    assert reply.WhichOneof("payload") == "msg" and reply.msg.content[0].text == "hi"


async def test_files_and_data_both_ways(serve: Serve) -> None:
    async def reflect(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.artifact(list(ctx.message.parts), name="reflected")
        await ev.complete()

    s = await serve(ScriptedAgent(reflect))
    data = Struct()
    data.update({"k": [1, "two"]})
    # file_with_bytes holds the base64 text, as the official 0.3 SDK writes and reads it
    parts = [v03.Part(file=v03.FilePart(file_with_bytes=b"AAE=", mime_type="image/png",
                                        name="a.png")),
             v03.Part(file=v03.FilePart(file_with_uri="https://x.example/f", mime_type="text/csv")),
             v03.Part(data=v03.DataPart(data=data))]
    m = v03.Message(message_id="files", role=v03.ROLE_USER, content=parts)
    task = (await stub(s).SendMessage(v03.SendMessageRequest(request=m))).task
    assert list(task.artifacts[0].parts) == parts
    new = await s.stub.GetTask(pb.GetTaskRequest(id=task.id))
    raw, url, _ = new.artifacts[0].parts
    assert (raw.raw, raw.media_type, raw.filename) == (b"\x00\x01", "image/png", "a.png")
    assert (url.url, url.media_type) == ("https://x.example/f", "text/csv")
    # bytes that are not base64 text: taken as the content (a peer reading the proto plainly)
    m = v03.Message(message_id="raw", role=v03.ROLE_USER, content=[v03.Part(
        file=v03.FilePart(file_with_bytes=b"\x00\x01", mime_type="image/png"))])
    task = (await stub(s).SendMessage(v03.SendMessageRequest(request=m))).task
    new = await s.stub.GetTask(pb.GetTaskRequest(id=task.id))
    assert new.artifacts[0].parts[0].raw == b"\x00\x01"


async def test_stream_events_carry_final(serve: Serve) -> None:
    s = await serve()
    events = [e async for e in stub(s).SendStreamingMessage(
        v03.SendMessageRequest(request=msg("stream 2")))]
    kinds = [e.WhichOneof("payload") for e in events]
    assert kinds == ["task", "status_update", "artifact_update", "artifact_update",
                     "status_update"]
    assert [e.status_update.final for e in events if e.HasField("status_update")] == [False, True]
    assert events[-1].status_update.status.state == v03.TASK_STATE_COMPLETED


async def test_non_blocking_send_resubscribe_and_cancel(serve: Serve) -> None:
    s = await serve()
    old = stub(s)
    config = v03.SendMessageConfiguration(blocking=False)
    task = (await old.SendMessage(v03.SendMessageRequest(request=msg("slow 60"),
                                                         configuration=config))).task
    assert task.status.state in (v03.TASK_STATE_SUBMITTED, v03.TASK_STATE_WORKING)
    watching = old.TaskSubscription(v03.TaskSubscriptionRequest(name=f"tasks/{task.id}"))
    events = aiter(watching)
    first = await anext(events)
    assert first.task.id == task.id
    canceled = await old.CancelTask(v03.CancelTaskRequest(name=f"tasks/{task.id}"))
    assert canceled.status.state == v03.TASK_STATE_CANCELLED  # two Ls on 0.3's wire
    rest = [e async for e in events]
    assert rest[-1].status_update.status.state == v03.TASK_STATE_CANCELLED
    assert rest[-1].status_update.final
    again = await fails(old.CancelTask(v03.CancelTaskRequest(name=f"tasks/{task.id}")))
    assert again.reason == "TASK_NOT_CANCELABLE"


async def test_push_configs(serve: Serve) -> None:
    s = await serve()
    old = stub(s)
    task = (await old.SendMessage(v03.SendMessageRequest(request=msg("hi")))).task
    parent = f"tasks/{task.id}"
    made = await old.CreateTaskPushNotificationConfig(v03.CreateTaskPushNotificationConfigRequest(
        parent=parent, config_id="c1", config=v03.TaskPushNotificationConfig(
            push_notification_config=v03.PushNotificationConfig(
                url="https://hooks.example.com/g", token="tok",
                authentication=v03.AuthenticationInfo(schemes=["Bearer"], credentials="x")))))
    assert made.name == f"{parent}/pushNotificationConfigs/c1"
    assert made.push_notification_config.authentication.schemes == ["Bearer"]
    got = await old.GetTaskPushNotificationConfig(
        v03.GetTaskPushNotificationConfigRequest(name=made.name))
    readable = v03.TaskPushNotificationConfig()
    readable.CopyFrom(made)
    readable.push_notification_config.authentication.ClearField("credentials")  # write-only
    assert got == readable
    listed = await old.ListTaskPushNotificationConfig(
        v03.ListTaskPushNotificationConfigRequest(parent=parent))
    assert list(listed.configs) == [readable]
    await old.DeleteTaskPushNotificationConfig(
        v03.DeleteTaskPushNotificationConfigRequest(name=made.name))
    gone = await fails(old.GetTaskPushNotificationConfig(
        v03.GetTaskPushNotificationConfigRequest(name=made.name)))
    assert gone.code == grpc.StatusCode.NOT_FOUND


async def test_the_card(serve: Serve) -> None:
    s = await serve()
    card = await stub(s).GetAgentCard(v03.GetAgentCardRequest())
    assert card.name == s.handler.card.name and card.protocol_version == "0.3.0"
    assert card.capabilities.streaming and card.skills[0].id == s.handler.card.skills[0].id


@pytest.mark.parametrize(("call", "field"), [
    ("GetTask", "name"), ("CancelTask", "name"), ("GetTaskPushNotificationConfig", "name")])
async def test_bad_resource_names_are_invalid_params(serve: Serve, call: str, field: str) -> None:
    s = await serve()
    request = {"GetTask": v03.GetTaskRequest, "CancelTask": v03.CancelTaskRequest,
               "GetTaskPushNotificationConfig": v03.GetTaskPushNotificationConfigRequest}[call]
    seen = await fails(getattr(stub(s), call)(request(name="tasks/a/b")))
    assert seen.code == grpc.StatusCode.INVALID_ARGUMENT and seen.fields == [field]


async def test_errors_unknown_task_bad_bytes_and_a_contradicting_version(serve: Serve) -> None:
    s = await serve()
    missing = await fails(stub(s).GetTask(v03.GetTaskRequest(name="tasks/nope")))
    assert (missing.code, missing.reason) == (grpc.StatusCode.NOT_FOUND, "TASK_NOT_FOUND")
    raw = s.channel.unary_unary("/a2a.v1.A2AService/GetTask")
    bad = await fails(raw(b"\xff\xff\xff"))
    assert bad.code == grpc.StatusCode.INVALID_ARGUMENT
    wrong = await fails(stub(s).GetTask(v03.GetTaskRequest(name="tasks/nope"),
                                        metadata=(("a2a-version", "1.0"),)))
    assert wrong.reason == "VERSION_NOT_SUPPORTED"


async def test_the_card_keeps_security_schemes_and_requirements(serve: Serve) -> None:
    s = await serve()
    card = s.handler.card
    card.security_schemes["bearer"].http_auth_security_scheme.scheme = "Bearer"
    flows = card.security_schemes["oauth"].oauth2_security_scheme.flows
    flows.client_credentials.token_url = "https://auth.example.com/token"
    flows.client_credentials.scopes["tasks"] = "use tasks"
    card.security_requirements.add().schemes["oauth"].list.append("tasks")
    got = await stub(s).GetAgentCard(v03.GetAgentCardRequest())
    assert got.security_schemes["bearer"].http_auth_security_scheme.scheme == "Bearer"
    cc = got.security_schemes["oauth"].oauth2_security_scheme.flows.client_credentials
    assert (cc.token_url, dict(cc.scopes)) == ("https://auth.example.com/token",
                                               {"tasks": "use tasks"})
    assert list(got.security[0].schemes["oauth"].list) == ["tasks"]


@pytest.mark.parametrize("request_", [
    v03.SendMessageRequest(),  # no message at all
    v03.SendMessageRequest(request=v03.Message(message_id="m", role=v03.ROLE_USER,
                                               content=[v03.Part()])),  # a part with nothing
    v03.SendMessageRequest(request=msg("x"), configuration=v03.SendMessageConfiguration(
        blocking=True, push_notification=v03.PushNotificationConfig(url="not a url"))),
])
async def test_bad_sends_are_invalid_params_never_internal(
        serve: Serve, request_: v03.SendMessageRequest) -> None:
    s = await serve()
    seen = await fails(stub(s).SendMessage(request_))
    assert seen.code == grpc.StatusCode.INVALID_ARGUMENT, seen


async def test_bad_push_config_names_are_invalid_params(serve: Serve) -> None:
    s = await serve()
    for parent in ("", "tasks/", "tasks/a/b", "jobs/a"):
        seen = await fails(stub(s).CreateTaskPushNotificationConfig(
            v03.CreateTaskPushNotificationConfigRequest(parent=parent)))
        assert seen.code == grpc.StatusCode.INVALID_ARGUMENT, parent
    for name in ("", "tasks/a", "tasks/a/pushNotificationConfigs/", "x/y"):
        seen = await fails(stub(s).DeleteTaskPushNotificationConfig(
            v03.DeleteTaskPushNotificationConfigRequest(name=name)))
        assert seen.code == grpc.StatusCode.INVALID_ARGUMENT, name
