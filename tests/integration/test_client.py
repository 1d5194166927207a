"""Our client library against our server, over every binding, through a proxy
that refuses and cuts connections."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import pytest

from a2a_grpc.agent import RequestContext, TaskEvents
from a2a_grpc.bridge import CARD
from a2a_grpc.cards.card import RESUMABLE_STREAMS, Interface, public_card
from a2a_grpc.client import A2AClient, ClientOptions, NoUsableInterfaceError
from a2a_grpc.client.errors import AgentUnreachableError
from a2a_grpc.core import lifecycle
from a2a_grpc.core.errors import (
    InvalidParamsError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
)
from a2a_grpc.generated import a2a_pb2 as pb
from tests.conftest import Stack, StackFactory
from tests.fakes import ScriptedAgent
from tests.proxy import Proxy

BINDINGS = ["GRPC", "JSONRPC", "HTTP+JSON"]


@dataclass
class Served:
    stack: Stack
    grpc_proxy: Proxy
    http_proxy: Proxy
    url: str  # where the card is (through the proxy)


async def serve_proxied(stack: StackFactory, agent: object = None,
                        card: pb.AgentCard | None = None) -> Served:
    s = await stack(agent, card=card) if card is not None else await stack(agent)
    grpc_proxy = await Proxy(s.grpc_server.port).start()
    http_proxy = await Proxy(s.http.port or 0).start()
    base = f"http://127.0.0.1:{http_proxy.port}"
    full = public_card(s.handler.card, [
        Interface("GRPC", f"127.0.0.1:{grpc_proxy.port}"),
        Interface("JSONRPC", base + "/"), Interface("HTTP+JSON", base)])
    s.handler.card = full
    s.http.app[CARD].update(full)
    return Served(s, grpc_proxy, http_proxy, base)


@pytest.fixture
async def served(stack: StackFactory) -> AsyncIterator[Served]:
    s = await serve_proxied(stack)
    yield s
    await s.grpc_proxy.close()
    await s.http_proxy.close()


def client_for(s: Served, binding: str, **kw: Any) -> ClientOptions:
    return ClientOptions(prefer=[binding], backoff=0.01, **kw)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_every_method(served: Served, binding: str) -> None:
    async with await A2AClient.connect(served.url, client_for(served, binding)) as c:
        assert c.interface.protocol_binding == binding
        task = (await c.send_text("hello")).task
        assert task.artifacts[0].parts[0].text == "echo: hello"
        assert (await c.send_text("reply hi")).message.parts[0].text == "hi"
        events = [e async for e in c.stream_text("stream 3")]
        assert [e.WhichOneof("payload") for e in events][-1] == "status_update"
        got = await c.get_task(pb.GetTaskRequest(id=task.id, history_length=0))
        assert got.id == task.id and not got.history
        listed = await c.list_tasks(pb.ListTasksRequest(page_size=1))
        assert listed.total_size == 2 and listed.next_page_token
        slow = (await c.send_text("slow 30", return_immediately=True)).task
        watch = c.subscribe_to_task(pb.SubscribeToTaskRequest(id=slow.id))
        first = await anext(watch)
        assert first.task.status.state == pb.TASK_STATE_WORKING
        assert (await c.cancel_task(pb.CancelTaskRequest(id=slow.id))).status.state == \
            pb.TASK_STATE_CANCELED
        rest = [e async for e in watch]
        assert rest[-1].status_update.status.state == pb.TASK_STATE_CANCELED
        made = await c.create_task_push_notification_config(pb.TaskPushNotificationConfig(
            task_id=task.id, url="https://hooks.example.com/x"))
        assert (await c.get_task_push_notification_config(
            pb.GetTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))) == made
        assert len((await c.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))).configs) == 1
        await c.delete_task_push_notification_config(
            pb.DeleteTaskPushNotificationConfigRequest(task_id=task.id, id=made.id))
        extended = await c.get_extended_agent_card()  # the demo's, made for this caller
        assert "whoami" in [s.id for s in extended.skills]
        assert "made for anonymous" in extended.description
        assert extended.supported_interfaces == c.card.supported_interfaces


@pytest.mark.parametrize("binding", BINDINGS)
async def test_errors_arrive_typed(served: Served, binding: str) -> None:
    async with await A2AClient.connect(served.url, client_for(served, binding)) as c:
        with pytest.raises(TaskNotFoundError):
            await c.get_task(pb.GetTaskRequest(id="nope"))
        done = (await c.send_text("x")).task
        with pytest.raises(TaskNotCancelableError):
            await c.cancel_task(pb.CancelTaskRequest(id=done.id))
        with pytest.raises(UnsupportedOperationError):
            await c.send_text("again", task_id=done.id)
        with pytest.raises(InvalidParamsError) as info:
            await c.list_tasks(pb.ListTasksRequest(page_size=1000))
        assert info.value.violations[0].field == "pageSize"
        with pytest.raises(TaskNotFoundError):
            async for _ in c.stream_text("x", task_id="nope"):
                pass


@pytest.mark.parametrize("binding", BINDINGS)
async def test_credentials_tenant_and_interceptors(stack: StackFactory, binding: str) -> None:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        md = ctx.call.metadata
        await ev.artifact(",".join(md.get(k, "-") for k in (
            "authorization", "x-team-key", "x-extra", "x-seen-rpc", "a2a-version")))
        await ev.complete()

    card = pb.AgentCard(name="x", capabilities=pb.AgentCapabilities(streaming=True))
    card.security_schemes["team"].api_key_security_scheme.location = "header"
    card.security_schemes["team"].api_key_security_scheme.name = "X-Team-Key"
    s = await serve_proxied(stack, ScriptedAgent(script), card)
    for i in s.stack.handler.card.supported_interfaces:
        i.tenant = "acme"
    s.stack.http.app[CARD].update(s.stack.handler.card)

    def intercept(rpc: str, headers: dict[str, str]) -> None:
        headers["X-Seen-Rpc"] = rpc

    options = client_for(s, binding, api_key="k1", bearer="t0k", headers={"X-Extra": "e"},
                         interceptors=[intercept])
    async with await A2AClient.connect(s.url, options) as c:
        task = (await c.send_text("x")).task
        assert task.artifacts[0].parts[0].text == "Bearer t0k,k1,e,SendMessage,1.0"
        assert (await c.get_task(pb.GetTaskRequest(id=task.id))).id == task.id  # tenant acme
    listed = await s.stack.handler.list_tasks(pb.ListTasksRequest(tenant="acme"),
                                              __import__("a2a_grpc").CallContext())
    assert listed.total_size == 1
    await s.grpc_proxy.close()
    await s.http_proxy.close()


@pytest.mark.parametrize("binding", BINDINGS)
async def test_idempotent_calls_are_retried_after_a_dropped_connection(
    served: Served, binding: str
) -> None:
    async with await A2AClient.connect(served.url, client_for(served, binding)) as c:
        task = (await c.send_text("x")).task
        proxy = served.grpc_proxy if binding == "GRPC" else served.http_proxy
        proxy.cut()
        proxy.drop_next = 1
        got = await c.get_task(pb.GetTaskRequest(id=task.id))
        assert got.id == task.id
        assert proxy.drop_next == 0  # the first connection was dropped, then retried


@pytest.mark.parametrize("binding", ["JSONRPC", "HTTP+JSON"])
async def test_a_non_idempotent_call_is_not_retried(served: Served, binding: str) -> None:
    async with await A2AClient.connect(served.url, client_for(served, binding)) as c:
        task = (await c.send_text("x")).task
        served.http_proxy.cut()
        served.http_proxy.drop_next = 1
        with pytest.raises(AgentUnreachableError):
            await c.create_task_push_notification_config(pb.TaskPushNotificationConfig(
                task_id=task.id, url="https://hooks.example.com/x"))  # no id: not idempotent
        listed = await c.list_task_push_notification_configs(
            pb.ListTaskPushNotificationConfigsRequest(task_id=task.id))
        assert len(listed.configs) == 0


def chunky() -> ScriptedAgent:
    async def script(ctx: RequestContext, ev: TaskEvents) -> None:
        await ev.working()
        for i in range(1, 31):
            await ev.artifact(f"chunk {i}", artifact_id="a", append=i > 1)
            await asyncio.sleep(0.01)
        await ev.complete()

    return ScriptedAgent(script)


@pytest.mark.parametrize("binding", BINDINGS)
async def test_a_dropped_stream_resumes_without_gap_or_duplicate(
    stack: StackFactory, binding: str
) -> None:
    s = await serve_proxied(stack, chunky())
    assert any(x.uri == RESUMABLE_STREAMS.uri for x in s.stack.handler.card.capabilities.extensions)
    proxy = s.grpc_proxy if binding == "GRPC" else s.http_proxy
    texts: list[str] = []
    task: pb.Task | None = None
    try:
        async with await A2AClient.connect(s.url, client_for(s, binding)) as c:
            async for event in c.stream_text("go"):
                task = lifecycle.apply(task, event).task  # as a caller folds what it gets
                if event.HasField("artifact_update"):
                    texts.append(event.artifact_update.artifact.parts[0].text)
                    if len(texts) in (5, 17):
                        proxy.cut()  # the network fails mid-stream, twice
        assert texts == [f"chunk {i}" for i in range(1, 31)]
        assert task is not None and task.status.state == pb.TASK_STATE_COMPLETED
        [artifact] = task.artifacts  # each chunk appended once: nothing applied twice
        assert [p.text for p in artifact.parts] == texts
    finally:
        await s.grpc_proxy.close()
        await s.http_proxy.close()


async def test_no_usable_interface(stack: StackFactory) -> None:
    s = await serve_proxied(stack)
    card = pb.AgentCard()
    card.CopyFrom(s.stack.handler.card)
    del card.supported_interfaces[1:]  # gRPC only
    s.stack.http.app[CARD].update(card)
    with pytest.raises(NoUsableInterfaceError, match="GRPC"):
        await A2AClient.connect(s.url, ClientOptions(prefer=["JSONRPC"]))
    await s.grpc_proxy.close()
    await s.http_proxy.close()
