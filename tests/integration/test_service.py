"""Push config CRUD, the extended card, service parameters, internal errors,
health checking and reflection, over a real gRPC channel."""

from __future__ import annotations

import asyncio
import logging

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.demos.demo import DemoAgent, demo_card
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.grpc_edge.server import start_grpc
from a2a_grpc.handler.request_handler import RequestHandler
from a2a_grpc.stores import MemoryTaskStore, Scope
from tests.conftest import Serve, send_request, user_message
from tests.fakes import ScriptedAgent
from tests.grpc_errors import fails

HOOK = "https://client.example.com/hook"


async def test_push_config_crud(serve: Serve) -> None:
    s = await serve()
    task = (await s.stub.SendMessage(send_request("x"))).task
    made = await s.stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
        task_id=task.id, url=HOOK, token="tok",
        authentication=pb.AuthenticationInfo(scheme="Bearer", credentials="secret")))
    assert made.id and made.task_id == task.id and made.url == HOOK
    named = await s.stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
        task_id=task.id, id="mine", url=HOOK + "2"))
    assert named.id == "mine"
    got = await s.stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))
    readable = pb.TaskPushNotificationConfig()
    readable.CopyFrom(made)
    readable.authentication.ClearField("credentials")  # write-only (A2A #1681)
    assert got == readable and got.authentication.scheme == "Bearer"
    listed = await s.stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
    assert [c.id for c in listed.configs] == [made.id, "mine"] and listed.next_page_token == ""
    page = await s.stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id, page_size=1))
    assert [c.id for c in page.configs] == [made.id] and page.next_page_token
    page2 = await s.stub.ListTaskPushNotificationConfigs(pb.ListTaskPushNotificationConfigsRequest(
        task_id=task.id, page_size=1, page_token=page.next_page_token))
    assert [c.id for c in page2.configs] == ["mine"] and page2.next_page_token == ""
    for _ in range(2):  # deleting twice is fine (§3.1.10: idempotent)
        await s.stub.DeleteTaskPushNotificationConfig(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))
    seen = await fails(s.stub.GetTaskPushNotificationConfig(
        pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id)))
    assert seen.reason == "TASK_NOT_FOUND"


async def test_push_config_errors(serve: Serve) -> None:
    s = await serve()
    seen = await fails(s.stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id="nope", url=HOOK)))
    assert seen.reason == "TASK_NOT_FOUND"
    seen = await fails(s.stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(url=HOOK)))
    assert (seen.reason, seen.fields) == ("INVALID_PARAMS", ["taskId"])
    task = (await s.stub.SendMessage(send_request("x"))).task
    seen = await fails(s.stub.CreateTaskPushNotificationConfig(
        pb.TaskPushNotificationConfig(task_id=task.id, url="file:///etc/passwd")))
    assert (seen.reason, seen.fields) == ("INVALID_PARAMS", ["url"])
    seen = await fails(s.stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=task.id, page_token="zzz")))
    assert seen.reason == "INVALID_PARAMS"
    seen = await fails(s.stub.DeleteTaskPushNotificationConfig(
        pb.DeleteTaskPushNotificationConfigRequest(task_id="nope", id="x")))
    assert seen.reason == "TASK_NOT_FOUND"


async def test_push_config_given_with_the_message(serve: Serve) -> None:
    s = await serve()
    resp = await s.stub.SendMessage(pb.SendMessageRequest(
        message=user_message("x"), configuration=pb.SendMessageConfiguration(
            task_push_notification_config=pb.TaskPushNotificationConfig(url=HOOK, token="t"))))
    listed = await s.stub.ListTaskPushNotificationConfigs(
        pb.ListTaskPushNotificationConfigsRequest(task_id=resp.task.id))
    assert [(c.url, c.token, c.task_id) for c in listed.configs] == [(HOOK, "t", resp.task.id)]


async def test_push_operations_when_push_is_off(serve: Serve) -> None:
    s = await serve(push=False)
    task = (await s.stub.SendMessage(send_request("x"))).task
    calls = [
        s.stub.CreateTaskPushNotificationConfig(pb.TaskPushNotificationConfig(
            task_id=task.id, url=HOOK)),
        s.stub.GetTaskPushNotificationConfig(pb.GetTaskPushNotificationConfigRequest(
            task_id=task.id, id="x")),
        s.stub.ListTaskPushNotificationConfigs(pb.ListTaskPushNotificationConfigsRequest(
            task_id=task.id)),
        s.stub.DeleteTaskPushNotificationConfig(pb.DeleteTaskPushNotificationConfigRequest(
            task_id=task.id, id="x")),
        s.stub.SendMessage(pb.SendMessageRequest(
            message=user_message("x"), configuration=pb.SendMessageConfiguration(
                task_push_notification_config=pb.TaskPushNotificationConfig(url=HOOK)))),
    ]
    for call in calls:
        seen = await fails(call)
        assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                            "PUSH_NOTIFICATION_NOT_SUPPORTED")


async def test_extended_card(serve: Serve) -> None:
    plain = ScriptedAgent(_complete)  # an agent that offers no extended card of its own
    off = await serve(plain)
    seen = await fails(off.stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest()))
    assert seen.reason == "UNSUPPORTED_OPERATION"
    card = demo_card()
    card.capabilities.extended_agent_card = True
    unconfigured = await serve(plain, card=card)
    seen = await fails(unconfigured.stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest()))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "EXTENDED_AGENT_CARD_NOT_CONFIGURED")
    extended = pb.AgentCard()
    extended.CopyFrom(card)
    extended.skills.add(id="secret", name="Secret", description="for members", tags=["x"])
    on = await serve(plain, card=card, extended_card=extended)
    assert await on.stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest()) == extended


@pytest.mark.parametrize(("version", "ok"), [
    (None, True), ("1.0", True), ("1.0.3", True), ("0.3", False), ("2.0", False), ("1.1", False),
    ("banana", False),
])
async def test_a2a_version(serve: Serve, version: str | None, ok: bool) -> None:
    s = await serve()
    metadata = (("a2a-version", version),) if version else None
    call = s.stub.SendMessage(send_request("x"), metadata=metadata)
    if ok:
        assert (await call).task.status.state == pb.TASK_STATE_COMPLETED
    else:
        seen = await fails(call)
        assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                            "VERSION_NOT_SUPPORTED")
        assert "1.0" in seen.message


async def test_required_extension(serve: Serve) -> None:
    uri = "https://example.com/ext/must-have/v1"
    card = demo_card()
    card.capabilities.extensions.add(uri=uri, required=True)
    s = await serve(card=card)
    seen = await fails(s.stub.GetTask(pb.GetTaskRequest(id="x")))
    assert (seen.code, seen.reason) == (grpc.StatusCode.FAILED_PRECONDITION,
                                        "EXTENSION_SUPPORT_REQUIRED")
    ok = await s.stub.SendMessage(send_request("x"),
                                  metadata=(("a2a-extensions", f"other, {uri}"),))
    assert ok.task.status.state == pb.TASK_STATE_COMPLETED


class BrokenStore(MemoryTaskStore):
    """The real in-memory store, with a switch that makes reads fail."""

    broken = False

    async def get(self, scope: Scope, task_id: str):  # type: ignore[no-untyped-def]
        if self.broken:
            raise OSError("disk on fire at /var/lib/secret")
        return await MemoryTaskStore.get(self, scope, task_id)


async def test_unexpected_errors_are_internal_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    store = BrokenStore()
    handler = RequestHandler(DemoAgent(), demo_card(), store=store)
    server = await start_grpc(handler)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = A2AServiceStub(channel)
            task = (await stub.SendMessage(send_request("x"))).task
            store.broken = True
            with caplog.at_level(logging.ERROR, "a2a_grpc"):
                seen = await fails(stub.GetTask(pb.GetTaskRequest(id=task.id)))
            assert (seen.code, seen.reason, seen.message) == (
                grpc.StatusCode.INTERNAL, "INTERNAL_ERROR", "Internal error")
            assert "disk on fire" in caplog.text  # logged with the traceback, not sent
    finally:
        await server.stop(0)
        await handler.close()


async def test_health_and_reflection(serve: Serve) -> None:
    s = await serve()
    health = health_pb2_grpc.HealthStub(s.channel)
    for service in ("", "lf.a2a.v1.A2AService"):
        resp = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert resp.status == health_pb2.HealthCheckResponse.SERVING
    refl = reflection_pb2_grpc.ServerReflectionStub(s.channel)

    async def ask() -> list[reflection_pb2.ServerReflectionResponse]:
        call = refl.ServerReflectionInfo()
        await call.write(reflection_pb2.ServerReflectionRequest(list_services=""))
        await call.write(reflection_pb2.ServerReflectionRequest(
            file_containing_symbol="lf.a2a.v1.A2AService"))
        await call.done_writing()
        return [r async for r in call]

    listed, files = await ask()
    names = {svc.name for svc in listed.list_services_response.service}
    assert {"lf.a2a.v1.A2AService", "grpc.health.v1.Health"} <= names
    protos = [descriptor_pb2.FileDescriptorProto.FromString(b)
              for b in files.file_descriptor_response.file_descriptor_proto]
    methods = {m.name for f in protos for svc in f.service for m in svc.method}
    assert len({"SendMessage", "SubscribeToTask", "GetExtendedAgentCard"} & methods) == 3


def raw(channel: grpc.aio.Channel, method: str, stream: bool = False):  # type: ignore[no-untyped-def]
    make = channel.unary_stream if stream else channel.unary_unary
    return make(f"/lf.a2a.v1.A2AService/{method}",
                request_serializer=lambda b: b, response_deserializer=lambda b: b)


@pytest.mark.parametrize("body", [b"\xff\xff\xff", b"\x12\x80\x80\x80", b"\x0a\x05ab"])
async def test_bytes_that_are_not_protobuf_are_a_parse_error(serve: Serve, body: bytes) -> None:
    s = await serve()
    seen = await fails(raw(s.channel, "SendMessage")(body))
    assert (seen.code, seen.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "PARSE_ERROR")
    with pytest.raises(grpc.aio.AioRpcError) as info:
        async for _ in raw(s.channel, "SendStreamingMessage", stream=True)(body):
            pass
    assert info.value.code() == grpc.StatusCode.INVALID_ARGUMENT


async def test_oversized_requests_are_refused_and_the_server_carries_on(serve: Serve) -> None:
    s = await serve()
    huge = send_request("x" * (5 * 1024 * 1024))
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await s.stub.SendMessage(huge)
    assert info.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert (await s.stub.SendMessage(send_request("still here"))).task.status.state == \
        pb.TASK_STATE_COMPLETED


async def test_unknown_methods_are_unimplemented(serve: Serve) -> None:
    s = await serve()
    with pytest.raises(grpc.aio.AioRpcError) as info:
        await raw(s.channel, "QuerySkill")(b"")
    assert info.value.code() == grpc.StatusCode.UNIMPLEMENTED


async def test_nothing_stays_live_once_tasks_settle(serve: Serve) -> None:
    s = await serve()
    await s.stub.SendMessage(send_request("hello"))
    asked = (await s.stub.SendMessage(send_request("ask"))).task
    await fails(s.stub.SendMessage(send_request("x", task_id="nope")))
    [e async for e in s.stub.SendStreamingMessage(send_request("stream 3"))]
    await s.stub.SendMessage(send_request("y", task_id=asked.id))
    await s.stub.SendMessage(send_request("reply z"))
    for _ in range(100):
        if s.handler.live_tasks == 0:
            break
        await asyncio.sleep(0.01)
    assert s.handler.live_tasks == 0


async def _complete(_: RequestContext, events: TaskEvents) -> None:
    await events.complete()
