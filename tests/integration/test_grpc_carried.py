"""`serve --grpc-carrier pyvoy`: gRPC carried by Envoy's HTTP/2 (pyvoy), the
same servicers as over grpc.aio. Each call below goes, from grpc.aio's own
client, to a real `serve` on each carrier side by side, and the answers
must agree: codes, messages, rich error details, events, metadata. Then
what only the carried server has: every binding on both ports, SIGTERM
(while calls wait: test_grpc_carried_streams.py), and its Envoy going with
a killed `serve`."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from tests.conftest import send_request
from tests.grpc_errors import decode
from tests.processes import Server, alive, all_gone, descendants, reap, start_server

pytest.importorskip("pyvoy", reason="the a2a-grpc[pyvoy] extra is not installed")
V1 = (("a2a-version", "1.0"),)
CARRIERS = ("grpc.aio", "pyvoy")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, Server]]:
    """`serve` on each carrier, memory store, the demo agent."""
    started: dict[str, Server] = {}
    try:
        for carrier in CARRIERS:
            started[carrier] = asyncio.run(start_server(
                "serve", "--store", "memory", "--grpc-carrier", carrier))
        yield started
    finally:
        for server in started.values():
            reap(server.proc)


async def outcome(call: Any) -> Any:
    """What a call came to: its answer, or its error as the official clients read it."""
    try:
        return await call
    except grpc.aio.AioRpcError as exc:
        if dict(exc.trailing_metadata() or ()).get("grpc-status-details-bin") is None:
            return (exc.code(), exc.details())
        return decode(exc)


async def scenario(target: str) -> dict[str, Any]:
    """Every RPC of the service, and its errors, as grpc.aio's client sees them."""
    seen: dict[str, Any] = {}
    async with grpc.aio.insecure_channel(target) as channel:
        stub = A2AServiceStub(channel)
        sent = await stub.SendMessage(send_request("hello"), metadata=V1)
        task = sent.task
        seen["send"] = (task.status.state, task.artifacts[0].parts[0].text)
        got = await stub.GetTask(pb.GetTaskRequest(id=task.id, history_length=0), metadata=V1)
        seen["get"] = (got.id == task.id, len(got.history), got.status.state)
        seen["get unknown"] = await outcome(stub.GetTask(pb.GetTaskRequest(id="nope"),
                                                         metadata=V1))
        seen["bad message"] = await outcome(stub.SendMessage(
            pb.SendMessageRequest(message=pb.Message(role=pb.ROLE_USER)), metadata=V1))
        seen["version"] = await outcome(stub.GetTask(pb.GetTaskRequest(id=task.id),
                                                     metadata=(("a2a-version", "9.9"),)))
        raw = channel.unary_unary("/lf.a2a.v1.A2AService/GetTask")
        seen["not protobuf"] = await outcome(raw(b"\xff\xff\xff", metadata=V1))
        nowhere = channel.unary_unary("/lf.a2a.v1.A2AService/Nowhere")
        seen["no such method"] = (await outcome(nowhere(b"", metadata=V1)))[0]
        events = [e.WhichOneof("payload") async for e in stub.SendStreamingMessage(
            send_request("stream 3"), metadata=V1)]
        seen["stream"] = events
        slow = (await stub.SendMessage(pb.SendMessageRequest(
            message=pb.Message(message_id="slow-1", role=pb.ROLE_USER,
                               parts=[pb.Part(text="slow 30")]),
            configuration=pb.SendMessageConfiguration(return_immediately=True)),
            metadata=V1)).task
        seen["cancel"] = (await stub.CancelTask(pb.CancelTaskRequest(id=slow.id),
                                                metadata=V1)).status.state
        final = await outcome(_drained(stub.SubscribeToTask(
            pb.SubscribeToTaskRequest(id=task.id), metadata=V1)))
        seen["subscribe final"] = final._replace(message=final.message.replace(task.id, "ID"))
        listed = await stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
        seen["list"] = len(listed.tasks) >= 2
        card = await outcome(stub.GetExtendedAgentCard(pb.GetExtendedAgentCardRequest(),
                                                       metadata=V1))
        seen["extended card"] = (card if not isinstance(card, pb.AgentCard)  # ports differ
                                 else [s.id for s in card.skills])
        seen["push unknown"] = await outcome(stub.GetTaskPushNotificationConfig(
            pb.GetTaskPushNotificationConfigRequest(task_id="nope", id="x"), metadata=V1))
        gz = await stub.SendMessage(send_request("squeezed"), metadata=V1,
                                    compression=grpc.Compression.Gzip)
        seen["gzip"] = gz.task.artifacts[0].parts[0].text
        old = await V03Stub(channel).SendMessage(v03.SendMessageRequest(request=v03.Message(
            message_id="m03", role=v03.ROLE_USER, content=[v03.Part(text="from 0.3")])))
        seen["0.3"] = old.task.artifacts[0].parts[0].text
        health = health_pb2_grpc.HealthStub(channel)
        seen["health"] = (await health.Check(health_pb2.HealthCheckRequest())).status
        seen["health unknown"] = await outcome(health.Check(
            health_pb2.HealthCheckRequest(service="nope")))
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        async for answer in reflection.ServerReflectionInfo(iter([
                reflection_pb2.ServerReflectionRequest(list_services=""),
                reflection_pb2.ServerReflectionRequest(
                    file_containing_symbol="lf.a2a.v1.A2AService")])):
            seen.setdefault("reflection", []).append(
                sorted(s.name for s in answer.list_services_response.service) or
                len(answer.file_descriptor_response.file_descriptor_proto))
    return seen


async def _drained(stream: AsyncIterator[Any]) -> list[Any]:
    return [event async for event in stream]


async def test_every_rpc_answers_as_over_grpc_aio(servers: dict[str, Server]) -> None:
    over_aio = await scenario(servers["grpc.aio"].target)
    carried = await scenario(servers["pyvoy"].target)
    assert carried == over_aio
    # What the two agree on is what the clients expect (not two equal mistakes).
    assert carried["send"] == (pb.TASK_STATE_COMPLETED, "echo: hello")
    assert carried["get unknown"].code == grpc.StatusCode.NOT_FOUND
    assert carried["get unknown"].reason == "TASK_NOT_FOUND"
    assert carried["bad message"].fields
    assert carried["not protobuf"].code == grpc.StatusCode.INVALID_ARGUMENT
    assert carried["no such method"] == grpc.StatusCode.UNIMPLEMENTED
    assert carried["stream"][0] == "task" and carried["stream"].count("artifact_update") == 3
    assert carried["cancel"] == pb.TASK_STATE_CANCELED
    assert carried["gzip"] == "echo: squeezed" and carried["0.3"] == "echo: from 0.3"
    assert carried["health"] == health_pb2.HealthCheckResponse.SERVING
    assert carried["health unknown"][0] == grpc.StatusCode.NOT_FOUND
    assert "lf.a2a.v1.A2AService" in carried["reflection"][0]


async def test_both_ports_serve_every_binding_and_the_card_names_each(
        servers: dict[str, Server]) -> None:
    """`--grpc-port` keeps gRPC where clients had it on grpc.aio (the card
    names it); every binding is on `--http-port` too, gRPC included."""
    server = servers["pyvoy"]
    assert server.grpc_port != server.http_port
    async with aiohttp.ClientSession() as http:
        async with http.get(server.url + "/.well-known/agent-card.json") as resp:
            card = await resp.json()
        for port in (server.http_port, server.grpc_port):
            async with http.post(f"http://127.0.0.1:{port}/", json={
                    "jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {"message": {
                        "messageId": f"j{port}", "role": "ROLE_USER",
                        "parts": [{"text": "json"}]}}}, headers={"A2A-Version": "1.0"}) as resp:
                answer = await resp.json()
            assert answer["result"]["task"]["artifacts"][0]["parts"][0]["text"] == "echo: json"
            async with http.get(f"http://127.0.0.1:{port}/tasks/"
                                f"{answer['result']['task']['id']}",
                                headers={"A2A-Version": "1.0"}) as resp:
                rest = await resp.json()
    urls = {i["protocolBinding"]: i["url"] for i in card["supportedInterfaces"]}
    assert urls["GRPC"] == f"127.0.0.1:{server.grpc_port}"
    assert urls["JSONRPC"] == server.url + "/"
    for target in (urls["GRPC"], f"127.0.0.1:{server.http_port}"):  # the card's, and HTTP's
        async with grpc.aio.insecure_channel(target) as channel:
            got = await A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id=rest["id"]),
                                                        metadata=V1)
        assert got.status.state == pb.TASK_STATE_COMPLETED


async def test_sigterm_lets_calls_in_progress_finish(tmp_path: Any) -> None:
    store = f"sqlite:///{tmp_path / 'tasks.db'}"
    server = await start_server("serve", "--store", store, "--grpc-carrier", "pyvoy")
    try:
        async with grpc.aio.insecure_channel(server.target) as channel:
            stub = A2AServiceStub(channel)
            request = pb.SendMessageRequest(message=pb.Message(
                message_id="in-flight", role=pb.ROLE_USER, parts=[pb.Part(text="slow 1")]))
            call = asyncio.ensure_future(stub.SendMessage(request, metadata=V1))
            for _ in range(200):  # until the call is in progress (10 s at most)
                listed = await stub.ListTasks(pb.ListTasksRequest(), metadata=V1)
                if any(t.status.state == pb.TASK_STATE_WORKING for t in listed.tasks):
                    break
                await asyncio.sleep(0.05)
            server.proc.terminate()
            sent = await call
        assert sent.task.status.state == pb.TASK_STATE_COMPLETED
        assert await asyncio.to_thread(server.proc.wait, 15) == 0
    finally:
        reap(server.proc)
    again = await start_server("serve", "--store", store)  # on grpc.aio: the same store
    try:
        async with grpc.aio.insecure_channel(again.target) as channel:
            got = await A2AServiceStub(channel).GetTask(pb.GetTaskRequest(id=sent.task.id),
                                                        metadata=V1)
        assert got.artifacts[0].parts[0].text == "echo: slow 1"
    finally:
        reap(again.proc)


async def test_envoy_stops_when_serve_is_killed() -> None:
    """SIGKILL leaves `serve` no time to stop the Envoy it started: Envoy
    stops itself once its parent is gone (it gets SIGTERM then, and ends its
    app's lifespan), and no Envoy is left serving on the port."""
    server = await start_server("serve", "--store", "memory", "--grpc-carrier", "pyvoy")
    try:
        envoy = descendants(server.proc.pid)
        assert envoy and all(alive(pid) for pid in envoy)
        server.proc.kill()
        assert not await all_gone(envoy)  # every thread: they hold its sockets
        for port in (server.http_port, server.grpc_port):
            with pytest.raises(OSError):
                socket.create_connection(("127.0.0.1", port), timeout=2).close()
    finally:
        reap(server.proc)
