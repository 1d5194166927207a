"""Extensions that answer (spec "Extensions"): the agent reads which a call
asked for and activates the ones it supports; every binding names the
activated ones in the response (`A2A-Extensions` on HTTP and on an SSE
response, `a2a-extensions` in gRPC's initial metadata); our client asks for
extensions and reads which were activated; an extension a call did not ask
for is never activated; the resumable-streams extension is named when a
stream is numbered for it."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import grpc
import pytest

from a2a_grpc.agent import AgentExecutor, RequestContext, TaskEvents
from a2a_grpc.client import A2AClient, ClientOptions
from a2a_grpc.core.stream import RESUMABLE_STREAMS_URI
from a2a_grpc.generated import a2a_pb2 as pb
from a2a_grpc.generated import a2a_v03_pb2 as v03
from a2a_grpc.generated.a2a_pb2_grpc import A2AServiceStub
from a2a_grpc.generated.a2a_v03_pb2_grpc import A2AServiceStub as V03Stub
from a2a_grpc.stores import open_store
from tests.conftest import StackFactory

STAMP = "https://example.com/a2a/ext/stamp/v1"
OTHER = "https://example.com/a2a/ext/other/v1"


class Stamping(AgentExecutor):
    """Activates the stamp extension when asked; supports no other (OTHER, when
    not asked for, cannot be activated either)."""

    card = pb.AgentCard(name="stamping", description="d", version="1",
                        default_input_modes=["text/plain"], default_output_modes=["text/plain"],
                        capabilities=pb.AgentCapabilities(streaming=True, extensions=[
                            pb.AgentExtension(uri=STAMP, description="stamps answers")]))

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        stamped = context.activate_extension(STAMP)
        if OTHER not in context.requested_extensions:
            assert not context.activate_extension(OTHER)  # not asked for: not activated
        await events.artifact("stamped" if stamped else "plain")
        await events.complete()


def message(text: str = "hi") -> pb.SendMessageRequest:
    return pb.SendMessageRequest(message=pb.Message(
        message_id=str(uuid.uuid4()), role=pb.ROLE_USER, parts=[pb.Part(text=text)]))


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_the_client_asks_and_reads_what_was_activated(stack: StackFactory,
                                                             binding: str) -> None:
    agent = Stamping()
    s = await stack(agent, card=agent.card)
    asking = A2AClient.from_card(s.card(), ClientOptions(prefer=[binding], extensions=[STAMP]))
    plain = A2AClient.from_card(s.card(), ClientOptions(prefer=[binding]))
    try:
        sent = await asking.send_message(message())
        assert sent.task.artifacts[0].parts[0].text == "stamped"
        assert asking.activated() == (STAMP,)
        events = [e async for e in asking.send_streaming_message(message())]
        assert events[-1].status_update.status.state == pb.TASK_STATE_COMPLETED
        assert asking.activated() == (STAMP,)
        sent = await plain.send_message(message())
        assert sent.task.artifacts[0].parts[0].text == "plain"
        assert plain.activated() == ()
    finally:
        await asking.close()
        await plain.close()


async def test_http_answers_and_streams_name_them(stack: StackFactory) -> None:
    agent = Stamping()
    s = await stack(agent, card=agent.card)
    headers = {"A2A-Version": "1.0", "A2A-Extensions": f"{STAMP}, {OTHER}"}
    body = {"message": {"messageId": "m1", "role": "ROLE_USER", "parts": [{"text": "hi"}]}}
    async with s.session.post(s.base_url + "/message:send", json=body,
                              headers=headers) as resp:
        assert resp.headers["A2A-Extensions"] == STAMP
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "SendStreamingMessage",
           "params": {"message": {**body["message"], "messageId": "m2"}}}
    async with s.session.post(s.base_url + "/", json=rpc, headers={
            **headers, "A2A-Extensions": f"{STAMP}, {RESUMABLE_STREAMS_URI}"}) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        named = {u.strip() for u in resp.headers["A2A-Extensions"].split(",")}
        assert named == {STAMP, RESUMABLE_STREAMS_URI}
        await resp.read()
    async with s.session.get(s.base_url + "/.well-known/agent-card.json") as resp:
        assert "A2A-Extensions" not in resp.headers  # nothing activated for a card


async def test_grpc_names_them_in_initial_metadata(stack: StackFactory) -> None:
    agent = Stamping()
    s = await stack(agent, card=agent.card)
    stub = A2AServiceStub(s.channel)
    asked = (("a2a-version", "1.0"), ("a2a-extensions", STAMP))
    call = stub.SendMessage(message(), metadata=asked)
    await call
    assert dict(await call.initial_metadata())["a2a-extensions"] == STAMP
    stream = stub.SendStreamingMessage(message(), metadata=asked)
    assert (await stream.read()).HasField("task")
    assert dict(await stream.initial_metadata())["a2a-extensions"] == STAMP
    while await stream.read() is not grpc.aio.EOF:
        pass
    quiet = stub.SendMessage(message(), metadata=(("a2a-version", "1.0"),))
    await quiet
    assert "a2a-extensions" not in dict(await quiet.initial_metadata() or ())
    assert (await quiet.code()) == grpc.StatusCode.OK


async def test_a_03_client_asks_by_03s_header_name_and_reads_it_back(
        stack: StackFactory) -> None:
    """A2A 0.3 named the header X-A2A-Extensions: asked so, the answer names the
    activated extensions by both names, on 0.3's gRPC service, JSON-RPC and REST."""
    agent = Stamping()
    s = await stack(agent, card=agent.card)
    call = V03Stub(s.channel).SendMessage(v03.SendMessageRequest(request=v03.Message(
        message_id=str(uuid.uuid4()), role=v03.ROLE_USER, content=[v03.Part(text="hi")])),
        metadata=(("x-a2a-extensions", STAMP),))
    answer = await call
    assert answer.task.artifacts[0].parts[0].text == "stamped"
    headers = dict(await call.initial_metadata())
    assert (headers["x-a2a-extensions"], headers["a2a-extensions"]) == (STAMP, STAMP)
    stream = V03Stub(s.channel).SendStreamingMessage(v03.SendMessageRequest(request=v03.Message(
        message_id=str(uuid.uuid4()), role=v03.ROLE_USER, content=[v03.Part(text="hi")])),
        metadata=(("x-a2a-extensions", STAMP),))
    assert dict(await stream.initial_metadata())["x-a2a-extensions"] == STAMP
    assert [e async for e in stream]
    rpc = {"jsonrpc": "2.0", "id": 1, "method": "message/send", "params": {"message": {
        "kind": "message", "messageId": str(uuid.uuid4()), "role": "user",
        "parts": [{"kind": "text", "text": "hi"}]}}}
    async with s.session.post(s.base_url + "/", json=rpc,
                              headers={"X-A2A-Extensions": STAMP}) as resp:
        assert (await resp.json())["result"]["artifacts"][0]["parts"][0]["text"] == "stamped"
        assert resp.headers["X-A2A-Extensions"] == resp.headers["A2A-Extensions"] == STAMP
    async with s.session.post(s.base_url + "/v1/message:send", json={"message": {
            "messageId": str(uuid.uuid4()), "role": "ROLE_USER", "content": [{"text": "hi"}]}},
            headers={"X-A2A-Extensions": STAMP}) as resp:
        assert resp.headers["X-A2A-Extensions"] == STAMP, await resp.text()


class HeldStamping(Stamping):
    """Stamps, then holds the task working until `release` is set."""

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def execute(self, context: RequestContext, events: TaskEvents) -> None:
        context.activate_extension(STAMP)
        await events.working("held")
        await self.release.wait()
        await events.artifact("stamped")
        await events.complete()


@pytest.mark.parametrize("binding", ["GRPC", "JSONRPC", "HTTP+JSON"])
async def test_a_retried_send_names_what_the_first_activated(
        stack: StackFactory, tmp_path: Path, binding: str) -> None:
    """A retry (the same messageId) starts no run, and is answered as the first
    send was: with the extensions its agent activated, if the retry asks for
    them; while the run goes on, once it is done, after a restart of the
    server on the same store, and for a retried stream."""
    url = f"sqlite:///{tmp_path}/tasks.db"
    agent = HeldStamping()
    s = await stack(agent, card=agent.card, store=await open_store(url))
    options = ClientOptions(prefer=[binding], extensions=[STAMP])
    asking = A2AClient.from_card(s.card(), options)
    plain = A2AClient.from_card(s.card(), ClientOptions(prefer=[binding]))
    sent, streamed = message(), message()
    sent.configuration.return_immediately = True
    try:
        first = await asking.send_message(sent)
        assert first.task.status.state == pb.TASK_STATE_WORKING
        assert asking.activated() == (STAMP,)
        running = await asking.send_message(sent)  # the run still going
        assert running.task.id == first.task.id
        assert asking.activated() == (STAMP,)
        agent.release.set()
        assert [e async for e in asking.send_streaming_message(streamed)]
        sent.configuration.return_immediately = False
        done = await asking.send_message(sent)  # from the store
        assert done.task.id == first.task.id and asking.activated() == (STAMP,)
        await plain.send_message(sent)  # not asked for: not named
        assert plain.activated() == ()
        again = [e async for e in asking.send_streaming_message(streamed)]
        assert again[-1].HasField("task") and asking.activated() == (STAMP,)
    finally:
        await asking.close()
        await plain.close()
    await s.handler.close()
    await s.handler.store.close()
    restarted = await stack(agent, card=agent.card, store=await open_store(url))
    after = A2AClient.from_card(restarted.card(), options)
    try:
        done = await after.send_message(sent)
        assert done.task.id == first.task.id
        assert after.activated() == (STAMP,)
    finally:
        await after.close()
